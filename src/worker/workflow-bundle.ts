import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  type BundleOptions,
  bundleWorkflowCode,
  type Logger,
  type WorkerOptions,
  type WorkflowBundleWithSourceMap,
} from '@temporalio/worker';

/** The workflows' entry module: the compiled `.js` in a build, the `.ts` source under a TS loader. */
export function workflowsPath(): string {
  const compiled = fileURLToPath(new URL('../workflows/index.js', import.meta.url));
  return existsSync(compiled) ? compiled : fileURLToPath(new URL('../workflows/index.ts', import.meta.url));
}

/** Where the build writes the workflow bundle (scripts/bundle-workflows.mjs): beside the compiled workflows. */
export function prebuiltBundlePath(): string {
  return fileURLToPath(new URL('../workflows/bundle.js', import.meta.url));
}

/**
 * Lets the bundler follow the `.js` specifiers that ESM TypeScript writes for `.ts` files, and
 * loads our workflow modules once per workflow thread (`preloadModules`) rather than once per
 * workflow: with the SDK's reused V8 context each run otherwise evaluates every module again.
 * Preloaded modules are shared and deep-frozen, so none may keep state at module scope (a Map or
 * Set there, a global RegExp, a counter): every workflow's state lives in its function's scope.
 */
export const bundlerOptions: Pick<BundleOptions, 'webpackConfigHook' | 'preloadModules'> = {
  webpackConfigHook: (config) => {
    config.resolve = { ...config.resolve, extensionAlias: { '.js': ['.ts', '.js'] } };
    return config;
  },
  preloadModules: [workflowsPath()],
};

/**
 * durable-bash's workflows for a worker: the bundle `npm run build` wrote, or else the source,
 * bundled with `bundling` (our `bundlerOptions` unless the caller joins its own hook to ours).
 */
export function ourWorkflows(
  bundling: Pick<WorkerOptions, 'bundlerOptions'> = { bundlerOptions },
): Pick<WorkerOptions, 'workflowsPath' | 'workflowBundle' | 'bundlerOptions'> {
  const prebuilt = prebuiltBundlePath();
  return existsSync(prebuilt)
    ? { workflowBundle: { codePath: prebuilt } }
    : { workflowsPath: workflowsPath(), ...bundling };
}

/** Bundles the workflows once, for processes that start many workers (tests, benchmarks). */
export function bundleWorkflows(logger?: Logger): Promise<WorkflowBundleWithSourceMap> {
  return bundleWorkflowCode({
    workflowsPath: workflowsPath(),
    ...bundlerOptions,
    ...(logger ? { logger } : {}),
  });
}
