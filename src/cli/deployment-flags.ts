/** `durable-bash worker`'s Worker Deployment version: `--deployment-name` and `--build-id`, or their env. */

export interface DeploymentFlags {
  deploymentName?: string;
  buildId?: string;
}

/**
 * The version the flags (else DURABLE_BASH_DEPLOYMENT_NAME and DURABLE_BASH_BUILD_ID) name, or
 * none; one of the two without the other is an error, said in one line.
 */
export function deploymentOf(
  flags: DeploymentFlags,
  env: NodeJS.ProcessEnv = process.env,
): { name: string; buildId: string } | undefined {
  const name = flags.deploymentName ?? env.DURABLE_BASH_DEPLOYMENT_NAME;
  const buildId = flags.buildId ?? env.DURABLE_BASH_BUILD_ID;
  if (name === undefined && buildId === undefined) return undefined;
  if (name === undefined || buildId === undefined)
    throw new Error(
      `--deployment-name and --build-id go together (a Worker Deployment version is both): got only ${name === undefined ? '--build-id' : '--deployment-name'}`,
    );
  return { name, buildId };
}
