// A user's agent workflow, importing the built package's entry (see test/plugin/package.test.ts).
import { workflowBashTools } from 'durable-bash/workflow';

export async function listAgent(taskQueue: string): Promise<string> {
  const result = await workflowBashTools({ taskQueue }).bash_list({});
  return result.content.map((block) => block.text).join('');
}
