import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { deriveAddressIn } from '../../src/chains/addresses';
import { HdSeed } from '../../src/chains/keys';

/** The embedded default's seed: generated once into DATA_DIR with 0600, stable across starts, never printed. */
describe('HdSeed.loadOrCreate and address_in', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-seed-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('generates DATA_DIR/seed.mnemonic with mode 0600 and derives the same addresses on the next start', () => {
    const a = HdSeed.loadOrCreate({ dataDir: dir });
    const file = path.join(dir, 'seed.mnemonic');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const b = HdSeed.loadOrCreate({ dataDir: dir });
    for (const network of ['bitcoin', 'ethereum', 'solana']) {
      expect(deriveAddressIn(b, network, 'mainnet', 3n)).toBe(deriveAddressIn(a, network, 'mainnet', 3n));
    }
  });

  it('never serialises its secret', () => {
    const seed = HdSeed.loadOrCreate({ dataDir: dir });
    const words = fs.readFileSync(path.join(dir, 'seed.mnemonic'), 'utf8').trim().split(' ');
    const printed = JSON.stringify({ seed }) + String(seed);
    expect(printed).not.toContain(words[0] + ' ' + words[1]);
    expect(JSON.stringify({ seed })).toBe('{"seed":"[HdSeed]"}');
  });

  it('a configured mnemonic wins over the file', () => {
    const mnemonic = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
    const seed = HdSeed.loadOrCreate({ dataDir: dir, mnemonic });
    expect(deriveAddressIn(seed, 'bitcoin', 'mainnet', 0n)).toBe('bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu');
    expect(fs.existsSync(path.join(dir, 'seed.mnemonic'))).toBe(false);
  });
});
