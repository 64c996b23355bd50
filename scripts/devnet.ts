/**
 * Drives the local chains of the embedded default (`npm start`), or runs them alone with `up`.
 *   npm run devnet -- install [--only litecoind,bitcoin,bchd]   install the local UTXO nodes (idempotent)
 *   npm run devnet -- up                                  start anvil, surfnet and the installed UTXO nodes; Ctrl-C stops them
 *   npm run devnet -- pay --ticker T --to ADDRESS --amount X   prints the txid
 *   npm run devnet -- mine --ticker T --blocks N               prints the new height
 *   npm run devnet -- address --ticker T                       prints a fresh payout address
 * The state (RPC URLs, test keys) is read from --dir, else DEVNET_DIR, else $DATA_DIR/devnet (./data/devnet).
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { devnetAddress, devnetMine, devnetPay } from '../devnet/drive';
import { readDevnetState, startDevnets } from '../devnet/index';
import { ALL_NODES, installNodes, type NodeName } from '../devnet/install';

async function main(): Promise<void> {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      ticker: { type: 'string' }, to: { type: 'string' }, amount: { type: 'string' }, blocks: { type: 'string' }, dir: { type: 'string' },
      only: { type: 'string' },
    },
  });
  const dir = values.dir ?? process.env.DEVNET_DIR ?? path.join(process.env.DATA_DIR ?? 'data', 'devnet');
  const [command] = positionals;
  const need = (v: string | undefined, flag: string) => {
    if (!v) throw new Error(`--${flag} is required`);
    return v;
  };
  switch (command) {
    case 'install': {
      const only = values.only?.split(',').map((n) => n.trim()) as NodeName[] | undefined;
      const unknown = only?.filter((n) => !ALL_NODES.includes(n));
      if (unknown?.length) throw new Error(`--only takes ${ALL_NODES.join(', ')}; not ${unknown.join(', ')}`);
      const results = installNodes({ only, log: (l) => console.log(`[install] ${l}`) });
      const failed = results.filter((r) => r.outcome === 'failed');
      for (const r of failed) console.error(`${r.node} is not installed: ${r.message}`);
      if (failed.length > 0) process.exitCode = 1;
      return;
    }
    case 'address': {
      console.log(await devnetAddress(readDevnetState(dir), need(values.ticker, 'ticker')));
      return;
    }
    case 'pay': {
      const txid = await devnetPay(readDevnetState(dir), need(values.ticker, 'ticker'), need(values.to, 'to'), need(values.amount, 'amount'));
      console.log(txid);
      return;
    }
    case 'mine': {
      const blocks = Number(need(values.blocks, 'blocks'));
      if (!Number.isInteger(blocks) || blocks < 1 || blocks > 10_000) throw new Error('--blocks must be an integer from 1 to 10000');
      console.log((await devnetMine(readDevnetState(dir), need(values.ticker, 'ticker'), blocks)).toString());
      return;
    }
    case 'up': {
      const nets = await startDevnets(dir);
      for (const [k, v] of Object.entries(nets.env)) console.log(`${k}=${k.endsWith('RPC_URL') ? v.replace(/\/\/[^@/]*@/, '//***@') : v}`);
      for (const n of nets.newChains) console.log(`local ${n} chain is new (the devnet kept no state of it across the restart)`);
      console.log(`state in ${nets.stateFile}; Ctrl-C stops the chains`);
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      await nets.stop();
      return;
    }
    default:
      throw new Error('usage: devnet install [--only litecoind,bitcoin,bchd] | up | pay --ticker T --to ADDRESS --amount X | mine --ticker T --blocks N | address --ticker T');
  }
}

main().then(
  () => process.exit(process.exitCode ?? 0),
  (e: unknown) => {
    console.error(e instanceof Error ? e.message : String(e));
    process.exit(1);
  },
);
