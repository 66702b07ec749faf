/**
 * The read position a client finds in a reader's history with no worker to ask (reader-history.ts):
 * for every reader history a release recorded, where that release's reader said it stood (the memo
 * it wrote on each move, before the position left the memo).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { defaultPayloadConverter } from '@temporalio/common';
import proto from '@temporalio/proto';
import { describe, expect, it } from 'vitest';
import { foldReaderHistory } from '../../src/client/reader-history.js';
import type { ReaderMemo } from '../../src/shared/read-position.js';

const HISTORIES = new URL('../fixtures/histories/', import.meta.url);
const { EventType } = proto.temporal.api.enums.v1;

const readerHistories = readdirSync(HISTORIES, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .flatMap((release) =>
    readdirSync(new URL(`${release.name}/`, HISTORIES))
      .filter((file) => file.includes('--bashOutputReader'))
      .map((file) => `${release.name}/${file}`),
  )
  .sort();

const decode = async (payload: proto.temporal.api.common.v1.IPayload) =>
  defaultPayloadConverter.fromPayload(payload);

/** The memo as the run's reader last wrote it: the start's, then each upsert merged over it. */
async function lastMemo(events: proto.temporal.api.history.v1.IHistoryEvent[]): Promise<ReaderMemo> {
  const memo: Record<string, unknown> = {};
  for (const event of events) {
    const fields =
      event.workflowExecutionStartedEventAttributes?.memo?.fields ??
      event.workflowPropertiesModifiedEventAttributes?.upsertedMemo?.fields ??
      {};
    for (const [key, payload] of Object.entries(fields)) memo[key] = await decode(payload);
  }
  return memo as unknown as ReaderMemo;
}

describe("a reader's position from its history", () => {
  it('has reader histories to read', () => {
    expect(readerHistories.length).toBeGreaterThan(0);
  });

  it.each(readerHistories)('is where the memo of %s said it was', async (file) => {
    const { events = [] } = proto.temporal.api.history.v1.History.fromObject(
      JSON.parse(readFileSync(new URL(file, HISTORIES), 'utf8')),
    );
    const memo = await lastMemo(events);
    const { state: folded } = await foldReaderHistory(events, decode);
    expect(folded.position).toEqual(memo.position);
    expect(folded.recentClaims).toEqual(memo.recentClaims);
    expect(folded.endShown === true).toBe(memo.endShown === true);
    // Each history moved the position at least once, or the comparison says little.
    const moved = events.filter(
      (event) => event.eventType === EventType.EVENT_TYPE_WORKFLOW_PROPERTIES_MODIFIED,
    );
    expect(moved.length).toBeGreaterThan(0);
  });
});
