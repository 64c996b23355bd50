import type { DevServerConfig } from '@temporalio/testing';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { executableOption, resolveTemporalCli, resolveTemporalTestServer } from '../../src/temporal/binaries';
import { NO_VERSION_CHECK_ARGS } from '../../src/temporal/devserver';

/** The real Temporal CLI dev server: the binary from .tools/PATH/config, else the SDK's download. */
export function createLocalEnv(opts: { searchAttributes?: DevServerConfig['searchAttributes'] } = {}) {
  return TestWorkflowEnvironment.createLocal({
    server: { executable: executableOption(resolveTemporalCli()), ip: '127.0.0.1', searchAttributes: opts.searchAttributes, extraArgs: NO_VERSION_CHECK_ARGS, log: { format: 'json', level: 'error' } },
  });
}

/** The time-skipping test server: timers of hours pass in milliseconds. */
export function createTimeSkippingEnv() {
  return TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: executableOption(resolveTemporalTestServer()) },
  });
}
