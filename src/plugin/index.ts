/** `durable-bash/plugin`: durable-bash in a worker and a client the user creates. */
export {
  DurableBashPlugin,
  type DurableBashPluginOptions,
  durableBashPlugin,
} from './durable-bash-plugin.js';
