import fs from 'node:fs';
import path from 'node:path';
import * as bip39 from 'bip39';
import { BIP32Factory, type BIP32Interface } from 'bip32';
import * as ecc from 'tiny-secp256k1';
import { slip10Ed25519 } from './sol/ed25519';
import { NETWORKS } from '../domain/assets';

const bip32 = BIP32Factory(ecc);

/**
 * The operator's HD seed. Production passes it in (GATEWAY_MNEMONIC or a file named by
 * GATEWAY_MNEMONIC_FILE); the embedded default generates one on first start into DATA_DIR/seed.mnemonic
 * with 0600 permissions. It is never logged, and no error message carries it.
 */
export class HdSeed {
  /**
   * Branch nodes (every node of a path but its last step) by path: a handful per network, so an
   * address derives in one step from its cached parent instead of five from the master key.
   */
  private readonly branches = new Map<string, BIP32Interface>();

  private constructor(private readonly seed: Buffer) {}

  private branch(path: string): BIP32Interface {
    let node = this.branches.get(path);
    if (!node) {
      const cut = path.lastIndexOf('/');
      node = cut < 0 ? bip32.fromSeed(this.seed) : this.branch(path.slice(0, cut)).derivePath(path.slice(cut + 1));
      this.branches.set(path, node);
    }
    return node;
  }

  static fromMnemonic(mnemonic: string): HdSeed {
    const words = mnemonic.trim().split(/\s+/).join(' ');
    if (!bip39.validateMnemonic(words)) throw new Error('the HD mnemonic is not a valid BIP39 mnemonic');
    return new HdSeed(bip39.mnemonicToSeedSync(words));
  }

  static loadOrCreate(opts: { mnemonic?: string; mnemonicFile?: string; dataDir: string }): HdSeed {
    if (opts.mnemonic) return HdSeed.fromMnemonic(opts.mnemonic);
    if (opts.mnemonicFile) return HdSeed.fromMnemonic(fs.readFileSync(opts.mnemonicFile, 'utf8'));
    const file = path.join(opts.dataDir, 'seed.mnemonic');
    if (!fs.existsSync(file)) {
      fs.mkdirSync(opts.dataDir, { recursive: true });
      // 'wx' never overwrites a seed another process wrote first.
      try {
        fs.writeFileSync(file, bip39.generateMnemonic(256) + '\n', { mode: 0o600, flag: 'wx' });
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      }
    }
    return HdSeed.fromMnemonic(fs.readFileSync(file, 'utf8'));
  }

  /** secp256k1 node at a BIP32 path (UTXO and EVM families). */
  secp256k1(derivation: string): BIP32Interface {
    if (!/^m(\/\d+'?)*$/.test(derivation)) throw new Error(`not a BIP32 path: ${derivation}`);
    const cut = derivation.lastIndexOf('/');
    return cut < 0 ? this.branch('m') : this.branch(derivation.slice(0, cut)).derivePath(derivation.slice(cut + 1));
  }

  /** The extended public key (xpub) of a BIP32 account node: public material only, never a private key. */
  accountXpub(path: string): string {
    return this.secp256k1(path).neutered().toBase58();
  }

  /** ed25519 32-byte private seed at a SLIP-10 path (all segments hardened), for Solana. */
  ed25519(derivation: string): Uint8Array {
    return new Uint8Array(slip10Ed25519(this.seed, derivation));
  }

  toJSON(): string {
    return '[HdSeed]';
  }
}

/**
 * Derivation paths of address_in index i, per network:
 * - BIP84 (native segwit) for btc and ltc: m/84'/coin'/0'/0/i
 * - BIP44 for bch, doge, zec and evm: m/44'/coin'/0'/0/i
 * - SLIP-10 ed25519 for Solana, the path wallets use: m/44'/501'/i'/0'
 */
export function derivationPath(networkId: string, index: number | bigint): string {
  const i = BigInt(index);
  if (i < 0n || i >= 2n ** 31n) throw new RangeError(`derivation index out of range: ${i}`);
  if (NETWORKS[networkId]?.family === 'sol') return `m/44'/501'/${i}'/0'`;
  return `${accountPath(networkId)}/0/${i}`;
}

/**
 * The hardened account node above every address_in of a BIP32 network (m/84'/coin'/0' or m/44'/coin'/0');
 * its xpub derives them all (…/0/i is unhardened). Solana's SLIP-10 path is hardened throughout: none.
 */
export function accountPath(networkId: string): string {
  const net = NETWORKS[networkId];
  if (!net) throw new Error(`unknown network ${networkId}`);
  if (net.family === 'sol') throw new Error('Solana addresses have no public derivation (SLIP-10 is hardened)');
  const purpose = networkId === 'bitcoin' || networkId === 'litecoin' ? 84 : 44;
  return `m/${purpose}'/${net.coinType}'/0'`;
}
