import type { DevServerConfig } from '@temporalio/testing';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { temporal } from '@temporalio/proto';
import type { WorkflowBundle } from '@temporalio/worker';
import { SEARCH_ATTRIBUTES } from '../../src/domain/search-attributes';
import { executableOption, resolveTemporalCli, resolveTemporalTestServer } from '../../src/temporal/binaries';
import { NO_VERSION_CHECK_ARGS } from '../../devnet/devserver';
import { bundleGatewayWorkflows } from '../../src/temporal/worker';

let bundled: Promise<WorkflowBundle> | undefined;

/**
 * The gateway's workflow code bundled once per test file (jest gives each file its own modules), for every
 * worker and replay of that file: `{ workflowBundle }` where `{ workflowsPath }` bundled again at each
 * Worker.create and each Worker.runReplayHistory (about a second each).
 */
export async function gatewayWorkflows(): Promise<{ workflowBundle: WorkflowBundle }> {
  bundled ??= bundleGatewayWorkflows({ quiet: true });
  return { workflowBundle: await bundled };
}

/** The real Temporal CLI dev server: the binary from .tools/PATH/config, else the SDK's download. */
export function createLocalEnv(opts: { searchAttributes?: DevServerConfig['searchAttributes'] } = {}) {
  return TestWorkflowEnvironment.createLocal({
    server: { executable: executableOption(resolveTemporalCli()), ip: '127.0.0.1', searchAttributes: opts.searchAttributes, extraArgs: NO_VERSION_CHECK_ARGS, log: { format: 'json', level: 'error' } },
  });
}

/**
 * The time-skipping test server: timers of hours pass in milliseconds. The gateway's search attributes are
 * registered on it (its operator service takes them, as a cluster's does), so a workflow writes them as it
 * does in production and its recorded history holds those commands; the server cannot list by them.
 */
export async function createTimeSkippingEnv(): Promise<TestWorkflowEnvironment> {
  const env = await TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: executableOption(resolveTemporalTestServer()) },
  });
  try {
    await env.connection.operatorService.addSearchAttributes({
      namespace: env.namespace ?? 'default',
      searchAttributes: Object.fromEntries(SEARCH_ATTRIBUTES.map((k) => [k.name, temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD])),
    });
  } catch (e) {
    await env.teardown();
    throw e;
  }
  return env;
}
