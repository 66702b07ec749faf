/**
 * The dev server's stderr: a file next to its database (`temporal.db.log`), not a pipe to `dev`.
 * A `dev` that is SIGKILLed then leaves a server that still runs (on a pipe it would die of SIGPIPE
 * at its next line), which the next `dev` on the same database finds and stops in one line. `dev`
 * follows the file and passes the server's lines on to its own stderr.
 */
import { closeSync, fstatSync, openSync, readSync, statSync } from 'node:fs';

/** How often a followed log is read for new lines. */
const FOLLOW_EVERY_MS = 500;

export class ServerLog {
  private readonly start: number;

  /** Opens (or creates) `file` for appending; `fd` is what the server writes to. */
  constructor(
    readonly file: string,
    readonly fd = openSync(file, 'a', 0o600),
  ) {
    this.start = fstatSync(fd).size;
  }

  /** The last line the server wrote since it started, trimmed; empty when none. */
  lastLine(): string {
    const lines = this.readFrom(this.start).text.split('\n');
    return (
      lines
        .map((line) => line.trim())
        .filter(Boolean)
        .at(-1) ?? ''
    );
  }

  /** Passes each line written from now on to `write`; returns the function that stops it. */
  follow(write: (text: string) => void): () => void {
    let position = statSync(this.file).size;
    const pass = () => {
      const { text, end } = this.readFrom(position, true);
      position = end;
      if (text) write(text);
    };
    const timer = setInterval(pass, FOLLOW_EVERY_MS);
    timer.unref();
    // A last read on stop: what the server wrote as it exited.
    return () => {
      clearInterval(timer);
      pass();
    };
  }

  /** Closes the file here (the server keeps its own copy of the descriptor). */
  close(): void {
    closeSync(this.fd);
  }

  /** The text from `position` on; with `wholeLines`, up to the last newline only. */
  private readFrom(position: number, wholeLines = false): { text: string; end: number } {
    const file = openSync(this.file, 'r');
    try {
      const size = fstatSync(file).size;
      if (size <= position) return { text: '', end: position };
      const buffer = Buffer.alloc(size - position);
      const read = readSync(file, buffer, 0, buffer.length, position);
      let text = buffer.subarray(0, read).toString('utf8');
      if (wholeLines) text = text.slice(0, text.lastIndexOf('\n') + 1);
      return { text, end: position + Buffer.byteLength(text) };
    } finally {
      closeSync(file);
    }
  }
}
