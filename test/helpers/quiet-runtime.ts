/** The SDK's runtime for every test file: tests expect failed workflows, so only the SDK's errors print. */
import { DefaultLogger, Runtime } from '@temporalio/worker';

Runtime.install({ logger: new DefaultLogger('ERROR') });
