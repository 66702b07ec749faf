/**
 * The symbols a class defines to cross a durable step of the AI SDK's workflows (`@workflow/serde`,
 * re-exported by `ai` 7): the same registered symbols, made here so that this entry point never
 * imports them at run time and still loads with AI SDK 6.
 */

/** `static [WORKFLOW_SERIALIZE](instance)`: the instance as plain data. */
export const WORKFLOW_SERIALIZE: unique symbol = Symbol.for('workflow-serialize');

/** `static [WORKFLOW_DESERIALIZE](data)`: an instance made again from that data. */
export const WORKFLOW_DESERIALIZE: unique symbol = Symbol.for('workflow-deserialize');
