/** A workflow of the test's own, with an activity of its own, for the plugin test's worker. */
import { proxyActivities } from '@temporalio/workflow';

const { shout } = proxyActivities<{ shout(text: string): Promise<string> }>({
  startToCloseTimeout: '10 seconds',
});

export async function greet(name: string): Promise<string> {
  return await shout(`hello ${name}`);
}
