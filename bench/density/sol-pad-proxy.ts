import { mainnetShapedBlock, spawnServer } from './sol-replay';

/**
 * A proxy in front of a live surfnet that pads every block it serves to mainnet's size: each getBlock
 * answer with transactionDetails 'accounts' gets generated mainnet-shaped transactions (bench/density/
 * sol-replay.ts: half votes, the rest with token balances, a third of them of the watched mint with owners
 * nobody watches) spliced in before the block's own ones, which stay as the node made them. surfnet
 * executes far fewer than 3,000 transactions in a 400 ms slot; through this proxy the gateway reads a
 * mainnet-sized block every slot, at mainnet's rate, with real deposits inside. Every other call passes
 * through untouched. `POST /pad` with `{"on": false}` turns the padding off (a baseline), `{"on": true}` on.
 * `POST /hold` with `{"slot": n}` holds the head the gateway sees at slot n (getSlot answers n, getBlocks
 * ranges end there) while the chain goes on, `{"slot": null}` lets it go: a backlog to catch up from. Every
 * block answer served is logged (`POST /served`: [slot, ms since the epoch] of each since `since`).
 */
const PROXY = `
const http = require('node:http');
const fs = require('node:fs');
const upstream = new URL(process.argv[1]);
const padding = fs.readFileSync(process.argv[2], 'utf8');
let on = true;
let padded = 0;
let held = null;
const served = [];
const agent = new http.Agent({ keepAlive: true });
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    if (req.url === '/pad') {
      on = JSON.parse(body.toString('utf8')).on === true;
      res.setHeader('content-type', 'application/json');
      return res.end(JSON.stringify({ on, padded }));
    }
    if (req.url === '/hold') {
      held = JSON.parse(body.toString('utf8')).slot;
      res.setHeader('content-type', 'application/json');
      return res.end(JSON.stringify({ held }));
    }
    if (req.url === '/served') {
      const since = JSON.parse(body.toString('utf8')).since;
      res.setHeader('content-type', 'application/json');
      return res.end(JSON.stringify(served.filter((s) => s[1] >= since)));
    }
    let pad = false;
    let log = -1;
    let call;
    try {
      call = JSON.parse(body.toString('utf8'));
      log = !Array.isArray(call) && call.method === 'getBlock' && call.params?.[1]?.transactionDetails === 'accounts' ? call.params[0] : -1;
      pad = on && log >= 0;
    } catch {}
    if (held !== null && call && !Array.isArray(call)) {
      if (call.method === 'getSlot') {
        res.setHeader('content-type', 'application/json');
        return res.end(JSON.stringify({ jsonrpc: '2.0', id: call.id, result: held }));
      }
      if (call.method === 'getBlocks') {
        call.params[1] = Math.min(call.params[1] ?? held, held);
        if (call.params[1] < call.params[0]) {
          res.setHeader('content-type', 'application/json');
          return res.end(JSON.stringify({ jsonrpc: '2.0', id: call.id, result: [] }));
        }
        return forward(Buffer.from(JSON.stringify(call)), false, -1);
      }
    }
    forward(body, pad, log);
  });
  function forward(body, pad, log) {
    const up = http.request(upstream, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': body.length } }, (r) => {
      if (log >= 0) r.on('end', () => { served.push([log, Date.now()]); if (served.length > 100000) served.splice(0, 50000); });
      if (!pad) {
        res.writeHead(r.statusCode, { 'content-type': r.headers['content-type'] || 'application/json' });
        return r.pipe(res);
      }
      const parts = [];
      r.on('data', (c) => parts.push(c));
      r.on('end', () => {
        let text = Buffer.concat(parts).toString('utf8');
        const at = text.indexOf('"transactions":[');
        if (at >= 0) {
          const open = at + '"transactions":['.length;
          const empty = text[open] === ']';
          text = text.slice(0, open) + padding + (empty ? '' : ',') + text.slice(open);
          padded++;
        }
        res.writeHead(r.statusCode, { 'content-type': 'application/json' });
        res.end(text);
      });
    });
    up.on('error', () => { res.statusCode = 502; res.end(); });
    up.end(body);
  }
});
server.listen(0, '127.0.0.1', () => process.stdout.write(server.address().port + '\\n'));
`;

export interface PadProxy {
  url: string;
  pid: number;
  /** Padding on or off; answers how many blocks were padded so far. */
  pad(on: boolean): Promise<number>;
  /** Holds the head the gateway sees at `slot`, or lets it go (null). */
  hold(slot: number | null): Promise<void>;
  /** [slot, epoch ms] of each block answer served since `since` (epoch ms). */
  served(since: number): Promise<Array<[number, number]>>;
  stop(): Promise<void>;
}

/** Starts the proxy in a process of its own (its CPU is not the gateway's); `txs` generated transactions per block. */
export async function startPadProxy(upstream: string, txs: number, watchedMint: string): Promise<PadProxy> {
  const block = JSON.parse(mainnetShapedBlock(txs, watchedMint)) as { transactions: unknown[] };
  const server = await spawnServer(PROXY, [upstream], JSON.stringify(block.transactions).slice(1, -1));
  return {
    ...server,
    pad: async (on) => {
      const r = await fetch(`${server.url}/pad`, { method: 'POST', body: JSON.stringify({ on }) });
      return ((await r.json()) as { padded: number }).padded;
    },
    hold: async (slot) => void (await fetch(`${server.url}/hold`, { method: 'POST', body: JSON.stringify({ slot }) }).then((r) => r.text())),
    served: async (since) => (await (await fetch(`${server.url}/served`, { method: 'POST', body: JSON.stringify({ since }) })).json()) as Array<[number, number]>,
  };
}
