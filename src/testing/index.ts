/**
 * `durable-bash/testing`: Temporal servers for a user's tests, started offline from the binaries
 * durable-bash provisions (docs/TESTING.md).
 */
export { createDevServerEnv, createTimeSkippingEnv, type DevServerPlace } from './servers.js';
