import type { CommandActivities } from './index.js';

/**
 * The command activities' names, as histories record them and as a caller finds them among a run's
 * pending activities. Checked against the activities themselves; renaming one would leave open
 * runs unable to replay, so a name here never changes.
 */
export const ActivityName = {
  resolveCommand: 'resolveCommand',
  chooseHost: 'chooseHost',
  runCommand: 'runCommand',
  stopCommand: 'stopCommand',
  writeStdin: 'writeStdin',
  readOutput: 'readOutput',
  releaseCommand: 'releaseCommand',
} as const satisfies { readonly [Name in keyof CommandActivities]: Name };
