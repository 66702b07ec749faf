/** `durable-bash/claude-agent-sdk` as a user's program imports it: the build, which runs the CLI and the plugin beside it. */
import path from 'node:path';
import { pathToFileURL } from 'node:url';

export type ClaudeAgentSdkEntry = typeof import('../../src/claude-agent-sdk/index.js');

export const builtClaudeAgentSdk = (): Promise<ClaudeAgentSdkEntry> =>
  import(pathToFileURL(path.resolve('dist/claude-agent-sdk/index.js')).href);
