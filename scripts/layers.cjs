/**
 * The floors of src/, bottom first: the one list that docs/ARCHITECTURE.md's table shows and
 * .dependency-cruiser.cjs turns into rules (run by `npm run lint`).
 */

/** Bottom first. A folder may import from any folder on a lower floor, never from its own floor's others. */
const FLOORS = [
  ['shared'],
  ['codec', 'policy', 'connection'],
  ['command-host'],
  ['activities', 'dev-server'],
  ['workflows'],
  ['client'],
  ['tools'],
  ['worker'],
  ['agent-host'],
  ['cli', 'mcp', 'dsh', 'ai-sdk', 'openai-agents', 'claude-agent-sdk', 'plugin', 'testing', 'workflow-tools'],
];

/** Code that runs in Temporal's workflow sandbox: deterministic, no I/O. */
const WORKFLOW_CODE = ['shared', 'workflows', 'workflow-tools'];

/** Entry points that serve another's command: `durable-bash mcp` is the CLI's. */
const ENTRY_POINT_USES = { cli: ['mcp'] };

module.exports = { FLOORS, WORKFLOW_CODE, ENTRY_POINT_USES };
