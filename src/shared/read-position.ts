/** The durable read position of `bash_output`: how many bytes of each stream readers have been given. */
export interface ReadPosition {
  stdout: number;
  stderr: number;
}

export const START_OF_OUTPUT: ReadPosition = { stdout: 0, stderr: 0 };

/** A reader's claim on the bytes before `upTo`: it gets what lies between the old position and it. */
export interface ClaimRequest {
  upTo: ReadPosition;
  /**
   * Epoch ms after which the claim must not apply: a reader that stopped waiting (no worker answered)
   * must not move the position for bytes it never showed.
   */
  expiresAtMs: number;
}

/** What a reader workflow run starts from. */
export interface OutputReaderInput {
  taskId: string;
  position: ReadPosition;
  /** Claims one run takes before it continues as new, keeping history and update counts bounded. */
  claimsPerRun: number;
  /** Time without claims after which the reader ends, handing its position over in its result. */
  idleMs: number;
}

/** The reader workflow of a task: its own id, so it can outlive the task's closed workflow. */
export function outputReaderId(taskId: string): string {
  return `${taskId}-output`;
}
