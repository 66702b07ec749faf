/**
 * Payloads that name where they belong. The codec authenticates a payload's key, not the workflow
 * it was sent to, so a client without the key can still copy a ciphertext from one history and send
 * it to another workflow. Each input, update and signal that acts therefore names its workflow (a
 * task's id, an approval's id) inside what is encrypted, and its workflow refuses one that names
 * another (workflows/addressed-payloads.ts). Pure: workflows and clients import the texts.
 */

/** How a refusal shows what a payload named: a string quoted, nothing as `none`. */
function shownNamed(named: unknown): string {
  if (named === undefined || named === null) return 'none';
  if (typeof named !== 'string') return `a ${typeof named}`;
  // Ids are short; whatever else came is cut, so the refusal stays one line.
  return JSON.stringify(named.length > MAX_SHOWN_CHARS ? `${named.slice(0, MAX_SHOWN_CHARS)}…` : named);
}

/** What a refusal quotes of a named id at most: ids are about 45 characters. */
const MAX_SHOWN_CHARS = 100;

/** Why a workflow started with an input that names another workflow ended at once. */
export const inputForOther = (workflowType: string, field: string, own: string, named: unknown) =>
  `${workflowType}: expected an input whose ${field} is this workflow's id ${own}, got ${shownNamed(named)}; nothing ran`;

/** Why an update's argument that names another workflow was refused: its validator's error. */
export const argumentForOther = (update: string, field: string, own: string, named: unknown) =>
  `${update}: expected an argument whose ${field} is ${own}, got ${shownNamed(named)}; nothing changed`;

/** Why an update's argument copied from another update (its id named there) was refused. */
export const argumentOfOtherUpdate = (update: string, field: string, updateId: string, named: unknown) =>
  `${update}: expected an argument whose ${field} is this update's id ${updateId}, got ${shownNamed(named)}; nothing changed`;

/** The worker's log line for a signal whose argument names another workflow. */
export const signalForOther = (signal: string, field: string, own: string, named: unknown) =>
  `${signal} signal ignored: expected an argument whose ${field} is ${own}, got ${shownNamed(named)}; nothing changed`;

/** The failure type of a workflow started with an input that names another. */
export const INPUT_FOR_OTHER_FAILURE = 'InputForOtherWorkflow';
