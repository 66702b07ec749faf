/** The workdir roots a test's worker declares unless the test names its own. */
import { realpathSync } from 'node:fs';
import os from 'node:os';

/**
 * The temporary directory, where tests make their workdirs, and the checkout, as `durable-bash dev`
 * declares its cwd. The tests of the boundary itself (test/security/) name their own.
 */
export const TEST_WORKDIR_ROOTS = [realpathSync(os.tmpdir()), process.cwd()];
