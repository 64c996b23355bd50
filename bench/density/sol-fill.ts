import { createPrivateKey, sign, type KeyObject } from 'node:crypto';
import { createAssociatedTokenAccountIdempotentInstruction, createTransferCheckedInstruction, getAssociatedTokenAddressSync } from '@solana/spl-token';
import { Keypair, PublicKey, SystemProgram, SYSVAR_CLOCK_PUBKEY, SYSVAR_SLOT_HASHES_PUBKEY, Transaction, VoteProgram, type TransactionInstruction } from '@solana/web3.js';
import { sendAndPoll, type SurfnetDevnet } from '../../devnet/surfnet';
import { SolBlockReader } from '../../src/chains/sol/block-reader';

/**
 * Fills surfnet slots with a mainnet block's mix: half vote-shaped transactions (a validator key pays the
 * fee, the vote program and two sysvars are read, nobody is paid), SPL transfers between associated token
 * accounts of the test mint (the watched mint), and SOL transfers. Signed with node's native ed25519 and
 * sent as fast as surfnet takes them, so that a slot holds as many as surfnet executes in its slot time.
 */
export interface SolFill {
  /** The confirmed slot before the first transaction. */
  from: number;
  /** The confirmed slot after the last one landed. */
  to: number;
  sent: number;
  failedToSend: number;
}

const PKCS8_ED25519 = Buffer.from('302e020100300506032b657004220420', 'hex');

function nativeKey(k: Keypair): KeyObject {
  return createPrivateKey({ key: Buffer.concat([PKCS8_ED25519, Buffer.from(k.secretKey.subarray(0, 32))]), format: 'der', type: 'pkcs8' });
}

function signed(ixs: TransactionInstruction[], payer: Keypair, key: KeyObject, blockhash: string, extra: Array<[Keypair, KeyObject]> = []): string {
  const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: blockhash }).add(...ixs);
  const message = tx.serializeMessage();
  tx.addSignature(payer.publicKey, sign(null, message, key));
  for (const [k, kk] of extra) tx.addSignature(k.publicKey, sign(null, message, kk));
  return tx.serialize({ verifySignatures: false }).toString('base64');
}

/** A surfnet busy with the sends before may hold a question longer than the reader waits: asked again. */
async function again<T>(ask: () => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await ask();
    } catch (e) {
      if (attempt >= attempts) throw e;
    }
  }
}

export async function fillSurfnet(dev: SurfnetDevnet, count: number, onProgress?: (sent: number) => void): Promise<SolFill> {
  // A send surfnet holds longer than 10 s is counted as refused (a loaded surfnet has been seen to stall).
  const reader = new SolBlockReader(dev.rpcUrl, 1, 10_000);
  const customer = Keypair.fromSecretKey(Uint8Array.from(dev.customerSecret));
  const customerKey = nativeKey(customer);
  const mint = new PublicKey(dev.tokens.sol_usdc);
  const source = getAssociatedTokenAddressSync(mint, customer.publicKey);
  // Recipients: owners with their associated token accounts made up front (most mainnet transfers go to existing ones).
  const owners = Array.from({ length: 200 }, () => Keypair.generate().publicKey);
  for (let i = 0; i < owners.length; i += 10) {
    await sendAndPoll(
      dev.connection,
      owners.slice(i, i + 10).map((o) => createAssociatedTokenAccountIdempotentInstruction(customer.publicKey, getAssociatedTokenAddressSync(mint, o), o, mint)),
      [customer],
    );
  }
  const voters = Array.from({ length: 16 }, () => Keypair.generate());
  await sendAndPoll(dev.connection, voters.map((v) => SystemProgram.transfer({ fromPubkey: customer.publicKey, toPubkey: v.publicKey, lamports: 10_000_000_000n })), [customer]);
  const voterKeys = voters.map(nativeKey);

  const from = await reader.slot();
  const latest = () => again(async () => (await reader.rpc<{ value: { blockhash: string } }>('getLatestBlockhash', [{ commitment: 'confirmed' }])).value.blockhash);
  const sign1 = (i: number, blockhash: string): string => {
    const kind = i % 20;
    if (kind < 10) {
      const v = i % voters.length;
      // The self-transfer's amount only makes each signature distinct.
      const ix = SystemProgram.transfer({ fromPubkey: voters[v].publicKey, toPubkey: voters[v].publicKey, lamports: BigInt(i) });
      ix.keys.push(
        { pubkey: VoteProgram.programId, isSigner: false, isWritable: false },
        { pubkey: SYSVAR_SLOT_HASHES_PUBKEY, isSigner: false, isWritable: false },
        { pubkey: SYSVAR_CLOCK_PUBKEY, isSigner: false, isWritable: false },
      );
      return signed([ix], voters[v], voterKeys[v], blockhash);
    }
    if (kind < 17) {
      const to = getAssociatedTokenAddressSync(mint, owners[i % owners.length]);
      return signed([createTransferCheckedInstruction(source, mint, to, customer.publicKey, BigInt(1_000 + i), 6)], customer, customerKey, blockhash);
    }
    return signed([SystemProgram.transfer({ fromPubkey: customer.publicKey, toPubkey: owners[i % owners.length], lamports: BigInt(1_000_000 + i) })], customer, customerKey, blockhash);
  };
  let failedToSend = 0;
  const sigs: string[] = [];
  // Signed in chunks, each with a fresh blockhash: a slow surfnet takes longer than a blockhash lives.
  for (let chunk = 0; chunk < count; chunk += 500) {
    const blockhash = await latest();
    const raw = Array.from({ length: Math.min(500, count - chunk) }, (_, k) => sign1(chunk + k, blockhash));
    let next = 0;
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (next < raw.length) {
          const k = next++;
          try {
            sigs[chunk + k] = await reader.rpc<string>('sendTransaction', [raw[k], { encoding: 'base64', skipPreflight: true }]);
          } catch {
            failedToSend++;
          }
          if (k % 100 === 0) onProgress?.(chunk + k);
        }
      }),
    );
  }
  // Landed: the last signatures' statuses are known.
  const last = sigs.filter(Boolean).slice(-50);
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    // A surfnet still busy with the sends may hold the question past the reader's timeout: asked again.
    const value = await reader
      .rpc<{ value: Array<{ confirmationStatus?: string } | null> }>('getSignatureStatuses', [last, { searchTransactionHistory: true }])
      .then((r) => r.value, () => null);
    if (value?.every((s) => s && s.confirmationStatus !== 'processed')) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  return { from, to: await again(() => reader.slot()), sent: count - failedToSend, failedToSend };
}
