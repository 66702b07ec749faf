/**
 * `durable-bash/testing`: Temporal servers for a user's tests, started offline from the binaries
 * durable-bash provisions, and a scripted command host for time-skipping tests of agent logic
 * (docs/TESTING.md).
 */
export { CommandScript, type ScriptPlan, script } from './command-script.js';
export { ScriptedHost, type ScriptedHostOptions, startScriptedHost } from './scripted-host.js';
export { createDevServerEnv, createTimeSkippingEnv, type DevServerPlace } from './servers.js';
