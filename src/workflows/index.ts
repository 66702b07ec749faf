export { bashTask } from './bash-task.js';
