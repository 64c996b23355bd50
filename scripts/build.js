#!/usr/bin/env node
// Makes what `npm start` runs: the gateway's TypeScript as plain JavaScript under dist/ (the image's layout:
// dist/src, dist/workflows, dist/drizzle …) and the workflow bundle, dist/workflow-bundle.js, so that a start
// neither transpiles through a loader nor runs webpack. Run by `npm install` (prepare) and before every
// `npm start` (prestart): a file whose content has not changed since the last run is not compiled again, and
// the bundle is made again only when a compiled file or the installed Temporal SDK changed, so an
// up-to-date tree costs a walk and a hash of the sources. Transpile only, as tsx did (`npm run build` and
// `npm run lint` type-check). dist/ is git-ignored.
'use strict';
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const root = path.resolve(__dirname, '..');
const dist = path.join(root, 'dist');
/** What src/main.ts and the entry points load, and the bundler (test/, bench/ and the other scripts run through tsx). */
const SOURCES = ['src', 'devnet', 'workflows', 'activities', 'api', 'clients/typescript', 'scripts/bundle-workflows.ts'];
const MANIFEST = path.join(dist, '.build-manifest.json');
const BUNDLE = path.join(dist, 'workflow-bundle.js');

const sha = (data) => crypto.createHash('sha256').update(data).digest('hex');

function walk(dir, out = []) {
  if (!fs.statSync(dir).isDirectory()) return [...out, dir];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else if (/\.(ts|cjs)$/.test(e.name) && !e.name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

function readManifest() {
  try {
    return JSON.parse(fs.readFileSync(MANIFEST, 'utf8'));
  } catch {
    return { files: {}, bundle: '' };
  }
}

/** The compiler options of tsconfig.json that shape emitted code (module, target, interop). */
function compilerOptions(ts) {
  const read = ts.readConfigFile(path.join(root, 'tsconfig.json'), ts.sys.readFile);
  const { options } = ts.parseJsonConfigFileContent(read.config, ts.sys, root);
  return { ...options, noEmit: false, declaration: false, sourceMap: true, inlineSources: false };
}

function build() {
  const manifest = readManifest();
  const files = {};
  const sources = SOURCES.filter((d) => fs.existsSync(path.join(root, d))).flatMap((d) => walk(path.join(root, d)));
  let ts;
  let options;
  let compiled = 0;
  for (const file of sources) {
    const rel = path.relative(root, file);
    const text = fs.readFileSync(file);
    const out = path.join(dist, rel.replace(/\.ts$/, '.js'));
    const was = manifest.files[rel];
    // Unchanged source and an output as this script wrote it (not edited or truncated since): kept.
    if (was && was.src === sha(text) && fs.existsSync(out) && was.out === sha(fs.readFileSync(out))) {
      files[rel] = was;
      continue;
    }
    fs.mkdirSync(path.dirname(out), { recursive: true });
    if (rel.endsWith('.cjs')) {
      fs.copyFileSync(file, out);
    } else {
      ts ??= require('typescript');
      options ??= compilerOptions(ts);
      const r = ts.transpileModule(text.toString('utf8'), { compilerOptions: options, fileName: file });
      fs.writeFileSync(out, r.outputText.replace(/\/\/# sourceMappingURL=.*$/m, `//# sourceMappingURL=${path.basename(out)}.map`));
      fs.writeFileSync(`${out}.map`, r.sourceMapText ?? '');
    }
    files[rel] = { src: sha(text), out: sha(fs.readFileSync(out)) };
    compiled++;
  }
  // Files whose source is gone go too, so that nothing stale can be loaded.
  for (const rel of Object.keys(manifest.files)) {
    if (files[rel]) continue;
    const out = path.join(dist, rel.replace(/\.ts$/, '.js'));
    fs.rmSync(out, { force: true });
    fs.rmSync(`${out}.map`, { force: true });
  }
  // Migrations are read beside dist/src/db, as in the image.
  fs.cpSync(path.join(root, 'drizzle'), path.join(dist, 'drizzle'), { recursive: true });

  const sdk = require(path.join(root, 'node_modules/@temporalio/workflow/package.json')).version;
  const bundleKey = sha(JSON.stringify({ files, sdk }));
  let bundled = false;
  if (manifest.bundle !== bundleKey || !fs.existsSync(BUNDLE) || manifest.bundleOut !== sha(fs.readFileSync(BUNDLE))) {
    const r = spawnSync(process.execPath, [path.join(dist, 'scripts/bundle-workflows.js'), BUNDLE], { cwd: root, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`the workflow bundle failed (exit ${r.status}):\n${r.stdout}${r.stderr}`);
    bundled = true;
  }
  fs.writeFileSync(MANIFEST, JSON.stringify({ files, bundle: bundleKey, bundleOut: sha(fs.readFileSync(BUNDLE)) }));
  if (compiled || bundled) process.stderr.write(`[build] ${compiled} file(s) compiled to dist/${bundled ? ', workflow bundle made' : ''}\n`);
}

try {
  build();
} catch (e) {
  process.stderr.write(`[build] ${e instanceof Error ? e.message : e}\n`);
  process.exit(1);
}
