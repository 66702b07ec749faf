import type { Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { searchAttributeNames } from '../shared/search-attributes.js';

/** gRPC ALREADY_EXISTS: the attributes were registered before, which is what we want. */
const ALREADY_EXISTS = 6;

/** Registers durable-bash's custom search attributes on a namespace as Keyword; idempotent. */
export async function registerSearchAttributes(
  connection: Pick<Connection, 'operatorService'>,
  namespace: string,
): Promise<void> {
  const keyword = proto.temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;
  try {
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(searchAttributeNames.map((name) => [name, keyword])),
    });
  } catch (err) {
    if ((err as { code?: unknown }).code !== ALREADY_EXISTS) throw err;
  }
}
