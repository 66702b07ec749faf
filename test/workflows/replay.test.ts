import { readdirSync, readFileSync } from 'node:fs';
import proto from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { describe, expect, inject, it } from 'vitest';

/**
 * The histories each release's workflows recorded when it was cut (scripts/record-histories.mjs,
 * one folder per release under test/fixtures/histories/, never changed after), replayed against
 * today's workflows: a worker of this version can take over every run a worker of those releases
 * started (docs/RELEASING.md). A replay that fails names the change that needs a patch.
 */
const HISTORIES = new URL('../fixtures/histories/', import.meta.url);

const recorded = readdirSync(HISTORIES, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .flatMap((release) =>
    readdirSync(new URL(`${release.name}/`, HISTORIES))
      .filter((file) => file.endsWith('.json'))
      .map((file) => `${release.name}/${file.slice(0, -'.json'.length)}`),
  )
  .sort();

/**
 * Read with `History.fromObject` rather than the SDK's JSON reader: in this dependency tree
 * `@temporalio/common` and `@temporalio/proto` each carry their own protobufjs 8, and
 * `historyFromJSON` fails across the two copies ("type must be a Type").
 */
function history(name: string) {
  const json = readFileSync(new URL(`${name}.json`, HISTORIES), 'utf8');
  return proto.temporal.api.history.v1.History.fromObject(JSON.parse(json));
}

describe('workflow replay', () => {
  it('has the histories of at least one release', () => {
    expect(recorded.length).toBeGreaterThan(0);
  });

  it.each(recorded)('replays the recorded %s history without nondeterminism', async (name) => {
    const recordedHistory = history(name);
    // Under its own workflow id, as a worker taking the run over replays it: a workflow checks that
    // its input names it (bashTask's taskId), and the SDK's default id is 'fake'.
    const workflowId = recordedHistory.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowId;
    expect(workflowId).toBeTruthy();
    await expect(
      Worker.runReplayHistory(
        { workflowBundle: { codePath: inject('workflowBundlePath') } },
        recordedHistory,
        workflowId ?? undefined,
      ),
    ).resolves.toBeUndefined();
  });
});
