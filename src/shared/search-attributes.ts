import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/**
 * The agent session that started a task; absent for a task started with no agent. A completion
 * notice that was not delivered carries its task's value too, so the session's listing finds it.
 */
export const ownerSearchAttribute = defineSearchAttributeKey('BashTaskOwner', SearchAttributeType.KEYWORD);

/** Where a task's run stands (see `TaskStatus`); kept current by the workflow. */
export const statusSearchAttribute = defineSearchAttributeKey('BashTaskStatus', SearchAttributeType.KEYWORD);

/**
 * Set on a completion notice's own workflow when it ends without reaching its session while the
 * session may still exist (its window ran out): `NOTICE_UNDELIVERED`. Absent on every other notice.
 */
export const noticeSearchAttribute = defineSearchAttributeKey('BashTaskNotice', SearchAttributeType.KEYWORD);

/** The value of `noticeSearchAttribute` on a notice that was not delivered. */
export const NOTICE_UNDELIVERED = 'undelivered';

/** Every custom search attribute durable-bash needs registered on its namespace, all Keyword. */
export const searchAttributeKeys = [
  ownerSearchAttribute,
  statusSearchAttribute,
  noticeSearchAttribute,
] as const;

/** Their names. */
export const searchAttributeNames: readonly string[] = searchAttributeKeys.map((key) => key.name);
