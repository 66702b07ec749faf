export { bashApproval } from './bash-approval.js';
export { bashReminder } from './bash-reminder.js';
export { bashTask } from './bash-task.js';
export { completionNotice } from './completion-notice.js';
export { monitorNotices } from './monitor-notices.js';
export { bashOutputReader } from './output-reader.js';
export { workspaceFiles } from './workspace-files.js';
