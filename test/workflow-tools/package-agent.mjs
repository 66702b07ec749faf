// A user's agent workflow, importing the built package's entry (see test/plugin/package.test.ts).
// Plain JavaScript: the type check runs before the build, when durable-bash/workflow has no types yet.
import { workflowBashTools } from 'durable-bash/workflow';

export async function listAgent(taskQueue) {
  const result = await workflowBashTools({ taskQueue }).bash_list({});
  return result.content.map((block) => block.text).join('');
}
