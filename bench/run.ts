// Runs the benchmark scripts in bench/ (all of them, or those named on the command line), one after another.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const dir = __dirname;
const named = process.argv.slice(2);
const scripts = (named.length ? named : fs.readdirSync(dir).filter((f) => f.endsWith('.ts') && f !== 'run.ts')).map((f) => path.resolve(dir, path.basename(f)));
if (scripts.length === 0) {
  console.log('no benchmark scripts in bench/');
  process.exit(0);
}
let failed = 0;
for (const script of scripts) {
  console.log(`== ${path.basename(script)}`);
  const r = spawnSync(process.execPath, [path.resolve(dir, '../node_modules/tsx/dist/cli.mjs'), script], { stdio: 'inherit' });
  if (r.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
