import { DefaultLogger, Runtime } from '@temporalio/worker';

// Tests expect failed workflows; only the SDK's errors are worth printing.
Runtime.install({ logger: new DefaultLogger('ERROR') });
