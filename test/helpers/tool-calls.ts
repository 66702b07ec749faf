/** The tools called in-process as an agent host calls them: by name, in a session, answering text. */
import type { Tool, ToolExecContext, ToolResult } from '../../src/shared/tool-types.js';

/** The tools `createBashTools` makes, by name. */
export type Tools = Record<'bash' | 'bash_output' | 'bash_kill' | 'bash_list' | 'bash_input', Tool>;

/** A list of tools (what `createBashTools` returns) by name. */
export function toolsByName(list: Tool[]): Tools {
  return Object.fromEntries(list.map((tool) => [tool.name, tool])) as Tools;
}

/** The text a tool's answer gives the model: its text blocks, joined. */
export const text = (result: ToolResult): string => result.content.map((block) => block.text).join('');

/** A call's context in the agent session `sessionId`. */
export const agent = (sessionId: string): ToolExecContext => ({ agent: { sessionId } });
