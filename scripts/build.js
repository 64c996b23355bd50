#!/usr/bin/env node
// Makes what `npm start` runs: the gateway's TypeScript as plain JavaScript under dist/ (the image's layout:
// dist/src, dist/workflows, dist/drizzle …) and the workflow bundle, dist/workflow-bundle.js, so that a start
// neither transpiles through a loader nor runs webpack. Run by `npm install` (prepare) and before every
// `npm start` (prestart): a file whose content has not changed since the last run is not compiled again, and
// the bundle is made again only when a compiled file or the installed Temporal SDK changed, so an
// up-to-date tree costs a walk and a hash of the sources. Transpile only, as tsx did (`npm run build` and
// `npm run lint` type-check). dist/ is git-ignored.
// It also bundles what `npm start` runs, the gateway and its threads, each into one file under dist/bundle/
// (START_BUNDLES): a thread holds the source text and the functions of every module it loads.
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
/**
 * `npm start`'s gateway and its threads, bundled from the TypeScript sources (entry → source): their ES imports let
 * the bundler leave out what the ES builds of the libraries export and the gateway never uses. The bundles sit two
 * folders below dist/, as the compiled modules do, so that the paths a module takes from its own folder lead to
 * the same files: ../../drizzle, ../../workflow-bundle.js, ../../workflows; and ../entry/<thread>.js to the
 * thread's bundle.
 */
const START_BUNDLES = {
  'bundle/gateway/main': 'src/main.ts',
  'bundle/entry/api-thread': 'src/entry/api-thread.ts',
  'bundle/entry/derive-thread': 'src/entry/derive-thread.ts',
  // Started from src/chains/sol/block-thread.ts, two folders deeper than src/: ../../entry from the gateway's bundle.
  'entry/sol-block-thread': 'src/entry/sol-block-thread.ts',
};
/**
 * Loaded from node_modules, not bundled: packages that read files beside their own (native addons, WebAssembly,
 * the Temporal SDK's workflow thread and bridge, swagger-ui's assets), packages the gateway loads only when first
 * used, whose whole text a bundle would hold from the start (solc, @bitgo/utxo-lib, iconv-lite's encodings), and
 * paths resolved, not loaded.
 */
const START_EXTERNAL = [
  '@temporalio/*', '@electric-sql/pglite', 'tiny-secp256k1', 'secp256k1', 'bufferutil', 'utf-8-validate', 'bigint-buffer', 'swagger-ui-dist',
  'solc', '@bitgo/utxo-lib', 'iconv-lite',
  '../../workflows', '../../workflows/preload', '@foundry-rs/*', '@openzeppelin/*',
];

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
  const start = bundleStart(manifest, files);
  fs.writeFileSync(MANIFEST, JSON.stringify({ files, bundle: bundleKey, bundleOut: sha(fs.readFileSync(BUNDLE)), start: start.key, startOut: start.out }));
  const made = [bundled && 'workflow bundle made', start.made && 'gateway bundled'].filter(Boolean);
  if (compiled || made.length) process.stderr.write(`[build] ${compiled} file(s) compiled to dist/${made.map((m) => `, ${m}`).join('')}\n`);
}

/**
 * The bundles of START_BUNDLES, made again when a source file or the installed packages changed (npm keeps
 * node_modules/.package-lock.json as it installed them). Whitespace and syntax are minified, names are kept:
 * stack traces and the error classes' names read as in the sources.
 */
function bundleStart(manifest, files) {
  const esbuild = require('esbuild');
  const options = {
    entryPoints: START_BUNDLES,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    external: START_EXTERNAL,
    minifyWhitespace: true,
    minifySyntax: true,
    lineLimit: 120, // an uncaught error prints its line
    logLevel: 'error',
  };
  const installed = path.join(root, 'node_modules/.package-lock.json');
  const key = sha(JSON.stringify({ files, options, esbuild: esbuild.version, installed: fs.existsSync(installed) ? sha(fs.readFileSync(installed)) : '' }));
  const outputs = Object.keys(START_BUNDLES).map((e) => path.join(dist, `${e}.js`));
  const out = () => sha(outputs.map((f) => (fs.existsSync(f) ? sha(fs.readFileSync(f)) : '')).join());
  if (manifest.start === key && manifest.startOut === out()) return { key, out: manifest.startOut, made: false };
  fs.rmSync(path.join(dist, 'bundle'), { recursive: true, force: true });
  esbuild.buildSync({ ...options, absWorkingDir: root, outdir: dist });
  return { key, out: out(), made: true };
}

try {
  build();
} catch (e) {
  process.stderr.write(`[build] ${e instanceof Error ? e.message : e}\n`);
  process.exit(1);
}
