import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config';

export const DEFAULT_KEY_FILE = 'callback-signing-key.pem';

export interface Signer {
  /** Standard base64 of RSA-SHA256 (PKCS#1 v1.5) over `bytes`. Throws SigningError; never sends anything. */
  sign(bytes: Buffer): Promise<string>;
  /** The current public key (SPKI PEM), read live so a rotated key file shows; undefined when none is configured. */
  publicKeyPem(): Promise<string | undefined>;
}

/** Carries no key material: only which source failed and the error code. */
export class SigningError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SigningError';
  }
}

type SignerConfig = Pick<Config, 'signingKeyFile' | 'signingKeyPem' | 'dataDir'>;

/** Environment secrets often arrive with literal "\n"; a PEM never contains a backslash. */
function normalizePem(pem: string): string {
  return pem.includes('\\n') ? pem.replace(/\\n/g, '\n') : pem;
}

function describe(e: unknown): string {
  const code = (e as { code?: unknown })?.code;
  return typeof code === 'string' ? code : e instanceof Error ? e.name : 'unknown error';
}

/**
 * Writes a fresh RSA key once: generated into a private temp file, then hard-linked into place, so an API
 * and a worker starting together end up with the same key (the loser of the race reads the winner's).
 */
export function ensureDefaultKey(dataDir: string): string {
  const file = path.join(dataDir, DEFAULT_KEY_FILE);
  if (fs.existsSync(file)) return file;
  fs.mkdirSync(dataDir, { recursive: true });
  const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
  const tmp = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`;
  fs.writeFileSync(tmp, pem, { mode: 0o600, flag: 'wx' });
  try {
    fs.linkSync(tmp, file);
  } catch (e) {
    if ((e as { code?: string }).code !== 'EEXIST') throw e;
  } finally {
    fs.unlinkSync(tmp);
  }
  return file;
}

/**
 * The callback signer: SIGNING_KEY_FILE (read at every use, so rotation needs no restart), else
 * SIGNING_KEY_PEM, else a key generated once into DATA_DIR (mode 0600).
 */
export function loadSigner(config: SignerConfig): Signer {
  let source: () => Promise<string | undefined>;
  if (config.signingKeyFile) {
    const file = config.signingKeyFile;
    source = async () => {
      try {
        return await fs.promises.readFile(file, 'utf8');
      } catch (e) {
        if ((e as { code?: string }).code === 'ENOENT') return undefined;
        throw new SigningError(`cannot read SIGNING_KEY_FILE: ${describe(e)}`);
      }
    };
  } else if (config.signingKeyPem) {
    const pem = normalizePem(config.signingKeyPem);
    source = async () => pem;
  } else {
    const file = ensureDefaultKey(config.dataDir);
    source = () => fs.promises.readFile(file, 'utf8');
  }

  // The key parsed from the last text read: a rotated file is a new text, parsed then.
  let parsed: { pem: string; key: crypto.KeyObject } | undefined;
  const privateKey = async (): Promise<crypto.KeyObject | undefined> => {
    const pem = await source();
    if (pem === undefined) return undefined;
    if (parsed?.pem === pem) return parsed.key;
    try {
      const key = crypto.createPrivateKey(pem);
      parsed = { pem, key };
      return key;
    } catch (e) {
      throw new SigningError(`signing key is not a valid private key: ${describe(e)}`);
    }
  };

  return {
    async sign(bytes) {
      const key = await privateKey();
      if (!key) throw new SigningError('no signing key configured');
      if (key.asymmetricKeyType !== 'rsa') throw new SigningError('signing key is not an RSA key');
      try {
        return crypto.sign('sha256', bytes, { key, padding: crypto.constants.RSA_PKCS1_PADDING }).toString('base64');
      } catch (e) {
        throw new SigningError(`signing failed: ${describe(e)}`);
      }
    },
    async publicKeyPem() {
      // A missing, unreadable or invalid key all read as "not configured" to the public endpoint.
      const key = await privateKey().catch(() => undefined);
      if (!key) return undefined;
      return crypto.createPublicKey(key).export({ type: 'spki', format: 'pem' }) as string;
    },
  };
}
