export { bashTask } from './bash-task.js';
export { bashOutputReader } from './output-reader.js';
