import fs from 'node:fs';
import path from 'node:path';
import { CONFIG_VARIABLES } from '../../src/config';
import { NETWORKS } from '../../src/domain/assets';

/**
 * The docs by reader (issue 58 item 5): README.md stays a front page (what it is, the two commands, where
 * to go next), links between the docs resolve, the configuration reference names every environment
 * variable the code reads and none it does not, and the monitoring page names every metric and alert.
 */
const root = path.resolve(__dirname, '../..');
const read = (rel: string) => fs.readFileSync(path.join(root, rel), 'utf8');

function walk(dir: string, keep: (file: string) => boolean): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
    const rel = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...walk(rel, keep));
    else if (keep(rel)) out.push(rel);
  }
  return out;
}

/** Markdown with fenced blocks and inline code taken out (a link inside code is an example, not a link). */
function prose(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchors(text: string): Set<string> {
  const out = new Set<string>();
  const seen = new Map<string, number>();
  for (const m of text.replace(/^```[\s\S]*?^```/gm, '').matchAll(/^#{1,6}\s+(.+?)\s*#*$/gm)) {
    const slug = m[1].toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n ? `${slug}-${n}` : slug);
  }
  return out;
}

const DOCS = ['README.md', ...walk('docs', (f) => f.endsWith('.md')), ...walk('clients', (f) => f.endsWith('README.md'))];

describe('README.md', () => {
  const readme = read('README.md');

  it('is a front page of at most 150 lines', () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(150);
  });

  it('gives the two set-up commands exactly', () => {
    const blocks = [...readme.matchAll(/^```sh\n([\s\S]*?)^```/gm)].map((m) => m[1].trim());
    expect(blocks).toContain('npm install && npm start');
    expect(blocks).toContain('npm test');
  });

  it('points to the merchant guide, the operator guide, the architecture and the decisions', () => {
    for (const target of ['docs/merchant-guide.md', 'docs/operator-guide.md', 'docs/architecture.md', 'docs/decisions/README.md']) {
      expect(readme).toContain(`](${target})`);
    }
  });
});

describe('links between the docs', () => {
  it('has docs to check', () => {
    expect(DOCS.length).toBeGreaterThan(10);
  });

  it.each(DOCS)('%s: every relative link resolves, anchors included', (doc) => {
    const broken: string[] = [];
    for (const m of prose(read(doc)).matchAll(/\]\(([^)\s]+)\)/g)) {
      const link = m[1];
      if (/^[a-z]+:/i.test(link)) continue;
      const [file, anchor] = link.split('#');
      const target = file ? path.normalize(path.join(path.dirname(doc), file)) : doc;
      if (target.startsWith('..') || !fs.existsSync(path.join(root, target))) {
        broken.push(`${link}: no file ${target}`);
        continue;
      }
      if (anchor !== undefined) {
        if (!target.endsWith('.md')) broken.push(`${link}: an anchor into a file that is not Markdown`);
        else if (!anchors(read(target)).has(anchor)) broken.push(`${link}: no heading #${anchor} in ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });
});

it('every docs/ path named in code, ops files and scripts exists', () => {
  const named = ['src', 'api', 'activities', 'workflows', 'devnet', 'scripts', 'ops', 'bench'].flatMap((d) => walk(d, (f) => /\.(ts|js|ya?ml|sh)$/.test(f)));
  const missing: string[] = [];
  for (const file of named) {
    for (const m of read(file).matchAll(/\bdocs\/[\w./-]+\.md\b/g)) if (!fs.existsSync(path.join(root, m[0]))) missing.push(`${file}: ${m[0]}`);
  }
  expect(missing).toEqual([]);
});

describe('the configuration reference', () => {
  const reference = 'docs/operator/configuration.md';

  /** The backticked names in the first column of the reference's tables. */
  function documented(): Set<string> {
    const out = new Set<string>();
    for (const row of read(reference).matchAll(/^\|([^|\n]*)\|/gm)) {
      for (const m of row[1].matchAll(/`([^`]+)`/g)) out.add(m[1]);
    }
    return out;
  }

  /** Every variable the code reads: the config schema, direct reads in the code, the per-network families. */
  function readByCode(): Set<string> {
    const out = new Set<string>(CONFIG_VARIABLES);
    const code = ['src', 'api', 'activities', 'workflows', 'devnet', 'scripts'].flatMap((d) => walk(d, (f) => /\.(ts|js)$/.test(f)));
    for (const file of code) {
      const text = read(file);
      for (const m of text.matchAll(/\benv\??\.([A-Z][A-Z0-9_]*)\b/g)) out.add(m[1]);
      for (const m of text.matchAll(/\benv\[['"]([A-Z][A-Z0-9_]*)['"]\]/g)) out.add(m[1]);
    }
    const chains = read('src/chains/config.ts');
    for (const m of chains.matchAll(/`\$\{envName\(id\)\}_([A-Z_]+)`/g)) out.add(`{NETWORK}_${m[1]}`);
    for (const m of chains.matchAll(/\bread\('([A-Z_]+)'/g)) out.add(`{NETWORK}_${m[1]}`);
    if (/_CONTRACT\$\//.test(chains)) out.add('{TICKER}_CONTRACT');
    // What docker-compose.yml substitutes from the operator's .env; ETHEREUM_RPC_URL is {NETWORK}_RPC_URL.
    const networks = Object.keys(NETWORKS).map((n) => n.toUpperCase());
    for (const m of read('docker-compose.yml').matchAll(/\$\{([A-Z][A-Z0-9_]*)/g)) {
      const net = networks.find((n) => m[1].startsWith(`${n}_`));
      if (!net || !out.has(m[1].replace(net, '{NETWORK}'))) out.add(m[1]);
    }
    return out;
  }

  it('finds the variables by the same rules the code is written in', () => {
    const code = readByCode();
    for (const v of ['DATABASE_URL', 'DEPOSIT_POLL_INTERVAL', '{NETWORK}_RPC_URL', '{NETWORK}_RPC_STALL_SECONDS', '{TICKER}_CONTRACT', 'POSTGRES_PASSWORD']) {
      expect(code).toContain(v);
    }
  });

  it('documents every environment variable the code reads', () => {
    const docs = documented();
    expect([...readByCode()].filter((v) => !docs.has(v)).sort()).toEqual([]);
  });

  it('documents no variable the code does not read', () => {
    const code = readByCode();
    // Rows may list several names in one cell; each must be one the code reads.
    expect([...documented()].filter((v) => /^[A-Z{]/.test(v) && !code.has(v)).sort()).toEqual([]);
  });
});

describe('the monitoring page', () => {
  const page = read('docs/operator/monitoring.md');

  it('names every metric the gateway exports', () => {
    const metrics = new Set<string>();
    for (const file of ['src', 'api'].flatMap((d) => walk(d, (f) => f.endsWith('.ts')))) {
      for (const m of read(file).matchAll(/name: '(gateway_[a-z_]+)'/g)) metrics.add(m[1]);
    }
    expect(metrics.size).toBeGreaterThan(10);
    expect([...metrics].filter((m) => !page.includes(`\`${m}\``)).sort()).toEqual([]);
  });

  it('names every alert of ops/prometheus/alerts.yml', () => {
    const alerts = [...read('ops/prometheus/alerts.yml').matchAll(/alert: (\w+)/g)].map((m) => m[1]);
    expect(alerts.length).toBeGreaterThan(5);
    expect(alerts.filter((a) => !page.includes(`\`${a}\``))).toEqual([]);
  });
});
