/**
 * The tests' Temporal servers: durable-bash's public test kit (`durable-bash/testing`), so the
 * project's tests start their servers exactly as a user's tests would.
 */
export { createDevServerEnv, createTimeSkippingEnv, type DevServerPlace } from '../../src/testing/index.js';
