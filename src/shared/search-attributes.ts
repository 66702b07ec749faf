import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** The agent session that started a task; absent for a task started with no agent. */
export const ownerSearchAttribute = defineSearchAttributeKey('BashTaskOwner', SearchAttributeType.KEYWORD);

/** Where a task's run stands (see `TaskStatus`); kept current by the workflow. */
export const statusSearchAttribute = defineSearchAttributeKey('BashTaskStatus', SearchAttributeType.KEYWORD);

/** Every custom search attribute durable-bash needs registered on its namespace, as Keyword. */
export const searchAttributeNames = [ownerSearchAttribute.name, statusSearchAttribute.name] as const;
