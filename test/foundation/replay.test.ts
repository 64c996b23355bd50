import fs from 'node:fs';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import { gatewayWorkflows } from '../helpers/temporal';

/**
 * Determinism guard: histories recorded from real runs of the gateway (`temporal workflow show
 * --output json`) must replay against today's workflow code. A change that would break an in-flight
 * deposit fails here. Before the tag v1.0.0 the histories are recorded again (test/workflows/payment-harness.ts);
 * from it on, such a change needs workflow versioning (patched()) instead (DESIGN 10).
 */
const dir = path.resolve(__dirname, '../fixtures/histories');
const files = fs.readdirSync(dir).filter((f) => f.endsWith('.json'));

describe('recorded workflow histories replay', () => {
  it('has recorded histories to replay', () => {
    expect(files.length).toBeGreaterThan(0);
  });

  it.each(files)('%s', async (file) => {
    // The CLI's JSON as it is: the SDK parses it (historyFromJSON) with its own protobuf types.
    const history: unknown = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
    await expect(Worker.runReplayHistory(await gatewayWorkflows(), history, file)).resolves.toBeUndefined();
  }, 120_000);
});
