/**
 * The few types of AI SDK 7's sandbox interface (`Experimental_SandboxSession` and what it names)
 * that this entry point implements, declared here by their shape: `ai` 6 exports none of them, and
 * the published types must compile for a user on either major. A type test keeps them assignable
 * to AI SDK 7's own (test/frameworks/ai-sdk-7/sandbox-types.test.ts).
 */

/** What `run` and `spawn` take. */
export interface SandboxRunOptions {
  command: string;
  workingDirectory?: string;
  env?: Record<string, string>;
  abortSignal?: AbortSignal;
}

export interface SandboxSpawnOptions extends SandboxRunOptions {
  stdin?: boolean;
}

/** What the file methods take. */
export interface SandboxPathOptions {
  path: string;
  abortSignal?: AbortSignal;
}

export interface SandboxReadTextFileOptions extends SandboxPathOptions {
  encoding?: string;
  startLine?: number;
  endLine?: number;
}

export interface SandboxWriteOptions<T> extends SandboxPathOptions {
  content: T;
}

/** What `stat` answers (links followed). */
export interface SandboxFileStat {
  type: 'file' | 'directory' | 'other';
  size: number;
}

/** One entry of what `listDirectory` answers. */
export interface SandboxDirectoryEntry {
  name: string;
  type: 'file' | 'directory' | 'symlink' | 'other';
}

/** A spawned process's handle. */
export interface SandboxProcess {
  readonly pid?: number;
  readonly stdout: ReadableStream<Uint8Array>;
  readonly stderr: ReadableStream<Uint8Array>;
  wait(): PromiseLike<{ exitCode: number }>;
  kill(): PromiseLike<void>;
}
