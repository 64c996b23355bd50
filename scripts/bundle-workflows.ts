// Builds the workflow bundle at image build time so workers start without webpack at run time.
import fs from 'node:fs';
import path from 'node:path';
import { bundleGatewayWorkflows } from '../src/temporal/worker';

async function main(): Promise<void> {
  const out = path.resolve(process.argv[2] ?? 'dist/workflow-bundle.js');
  const { code } = await bundleGatewayWorkflows();
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, code);
  console.log(`workflow bundle: ${out} (${code.length} bytes)`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
