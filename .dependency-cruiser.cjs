/**
 * The layers of src/ (docs/ARCHITECTURE.md draws them), as rules `npm run lint` enforces with
 * dependency-cruiser: a folder imports only from folders on a floor below its own, nothing in src/
 * forms a cycle (type imports count), and workflow code, selected by folder, imports only
 * workflow-safe code and no Node built-in. test/architecture/layers.test.ts checks that
 * ARCHITECTURE.md's table says the same as scripts/layers.cjs, and that a planted back arrow or cycle fails.
 */

const { FLOORS, WORKFLOW_CODE, ENTRY_POINT_USES } = require('./scripts/layers.cjs');

const folder = (name) => `^src/${name}/`;
const anyOf = (names) => `^src/(${names.join('|')})/`;

function layerRules() {
  const rules = [];
  FLOORS.forEach((floor, level) => {
    const below = FLOORS.slice(0, level).flat();
    for (const name of floor) {
      const allowed = [...below, name, ...(ENTRY_POINT_USES[name] ?? [])];
      const notAllowed = FLOORS.flat().filter((other) => !allowed.includes(other));
      if (notAllowed.length === 0) continue;
      rules.push({
        name: `layer-${name}`,
        comment: `src/${name} imports only from ${below.length ? below.join(', ') : 'no other folder'} (docs/ARCHITECTURE.md)`,
        severity: 'error',
        from: { path: folder(name) },
        to: { path: `${anyOf(notAllowed)}|^src/[^/]+\\.ts$` },
      });
    }
  });
  return rules;
}

module.exports = {
  forbidden: [
    {
      name: 'no-cycle',
      comment: 'No cycle in src/, type imports included: a cycle hides which part depends on which.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    ...layerRules(),
    {
      name: 'workflow-code-imports-workflow-code',
      comment: `Workflow code (src/${WORKFLOW_CODE.join(', src/')}) imports only workflow code; types from elsewhere are erased`,
      severity: 'error',
      from: { path: anyOf(WORKFLOW_CODE) },
      to: { path: '^src/', pathNot: anyOf(WORKFLOW_CODE), dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'workflow-code-no-node-builtins',
      comment: 'Workflow code is deterministic: no Node built-in (fs, crypto, timers, ...)',
      severity: 'error',
      from: { path: anyOf(WORKFLOW_CODE) },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'workflow-code-no-worker-packages',
      comment: 'Never import worker-side Temporal packages into workflow code',
      severity: 'error',
      from: { path: anyOf(WORKFLOW_CODE) },
      to: {
        path: '^node_modules/@temporalio/(worker|client|activity|testing|envconfig)/',
        dependencyTypesNot: ['type-only'],
      },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default'],
    },
  },
};
