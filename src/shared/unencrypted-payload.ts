/**
 * What a payload that was not encrypted becomes where a codec key is configured: the codec
 * (codec/aes-gcm-codec.ts) decodes it into this value, the same for every such payload, and holds
 * nothing of what was sent. Workflow code refuses it without failing its workflow task (a decode
 * that threw would fail every task of a workflow whose history holds the payload, for ever):
 * an update's validator rejects it, a signal's handler ignores it and logs, a workflow started
 * with it ends at once. A client refuses it in one line. Pure: both sides import it.
 */

/** The one field of the value an unencrypted payload decodes to. */
export const UNENCRYPTED_PAYLOAD_FIELD = 'durableBashUnencryptedPayload';

/** The value an unencrypted payload decodes to under a codec key. */
export const UNENCRYPTED_PAYLOAD = { [UNENCRYPTED_PAYLOAD_FIELD]: 'refused' } as const;

export type UnencryptedPayload = typeof UNENCRYPTED_PAYLOAD;

/** Whether a decoded value is the refusal of an unencrypted payload. */
export function isUnencryptedPayload(value: unknown): value is UnencryptedPayload {
  return typeof value === 'object' && value !== null && Object.hasOwn(value, UNENCRYPTED_PAYLOAD_FIELD);
}

/** Why an update's argument was refused: its validator's error, the caller's one line. */
export const unencryptedArgument = (update: string) =>
  `${update}: expected an argument encrypted with a codec key, got an unencrypted one; nothing changed`;

/** The worker's log line for a signal whose argument was refused. */
export const unencryptedSignal = (signal: string) =>
  `${signal} signal ignored: expected an argument encrypted with a codec key, got an unencrypted one; nothing changed`;

/** Why a workflow started with an unencrypted input failed at once. */
export const unencryptedInput = (workflowType: string) =>
  `${workflowType}: expected an input encrypted with a codec key, got an unencrypted one; nothing ran`;

/** The failure type of such a workflow. */
export const UNENCRYPTED_INPUT_FAILURE = 'UnencryptedInput';
