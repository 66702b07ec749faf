/**
 * What docs/ENCRYPTION.md tells an operator who turns encryption on: a run whose history holds
 * payloads stored without encryption does not go on under a key (its input decodes to the codec's
 * refusal), so such runs must end, or be terminated, before the workers get the key. The same
 * history replays without a key (test/workflows/replay.test.ts replays them all so).
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import proto from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { describe, expect, inject, it } from 'vitest';
import { encryptingDataConverter } from '../../src/codec/data-converter.js';
import { CodecKeyring } from '../../src/codec/keyring.js';
import { CODEC_KEY_BYTES } from '../../src/shared/limits.js';

/** A run recorded by 0.2.0 without encryption: its input, memo and results are plain JSON. */
const RECORDED = new URL(
  '../fixtures/histories/0.2.0/foreground-exit-nonzero--bashTask.json',
  import.meta.url,
);

const history = () =>
  proto.temporal.api.history.v1.History.fromObject(JSON.parse(readFileSync(RECORDED, 'utf8')));

/** The run's own workflow id, which a worker taking it over replays it under (its input names it). */
const workflowId = () =>
  history().events?.[0]?.workflowExecutionStartedEventAttributes?.workflowId ?? undefined;

describe('a history stored without encryption', () => {
  it('does not replay under a codec key: its run cannot go on once the workers have one', async () => {
    const keyed = encryptingDataConverter(
      new CodecKeyring([{ id: 'k1', secret: randomBytes(CODEC_KEY_BYTES) }]),
    );
    const replay = Worker.runReplayHistory(
      { workflowBundle: { codePath: inject('workflowBundlePath') }, dataConverter: keyed },
      history(),
      workflowId(),
    );
    await expect(replay).rejects.toMatchObject({
      name: 'DeterminismViolationError',
      message: expect.stringContaining('Nondeterminism error'),
    });
    await expect(
      Worker.runReplayHistory(
        { workflowBundle: { codePath: inject('workflowBundlePath') } },
        history(),
        workflowId(),
      ),
    ).resolves.toBeUndefined();
  });
});
