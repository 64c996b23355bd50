/**
 * The ceiling of bench/api.ts: bare Express on the same machine and database, no gateway code. It serves
 * the very bytes the gateway answered for catalog, info and both logs reads, and answers a JSON create with one `pg`
 * insert of a unique row. Started by bench/api.ts as its own process:
 *
 *   BARE_BODIES=<json file> BARE_PORT=<port> DATABASE_URL=… tsx bench/api-bare.ts
 */
import fs from 'node:fs';
import express from 'express';
import { Pool } from 'pg';

interface Bodies {
  catalog: string;
  info: string;
  logs: string;
  logsLive: string;
  liveCallback: string;
}

async function main(): Promise<void> {
  const bodies = JSON.parse(fs.readFileSync(process.env.BARE_BODIES!, 'utf8')) as Bodies;
  // The same pool size as the gateway's (src/db/client.ts).
  const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
  await pool.query('CREATE TABLE IF NOT EXISTS bench_bare (id bigserial PRIMARY KEY, callback_url text NOT NULL UNIQUE, created_at timestamptz NOT NULL DEFAULT now())');
  const app = express();
  app.disable('x-powered-by');
  const send = (body: string): express.RequestHandler => (_req, res) => {
    res.type('application/json').send(body);
  };
  app.get('/api/cryptocurrencies', send(bodies.catalog));
  app.get('/api/:ticker/info', send(bodies.info));
  app.get('/api/:ticker/logs', (req, res) => {
    res.type('application/json').send(req.query.callback === bodies.liveCallback ? bodies.logsLive : bodies.logs);
  });
  app.post('/api/:ticker/create', express.json({ limit: '16kb' }), async (req, res) => {
    const { rows } = await pool.query<{ id: string }>('INSERT INTO bench_bare (callback_url) VALUES ($1) RETURNING id', [req.body.callback_url]);
    res.json({ id: rows[0].id, callback_url: req.body.callback_url, status: 'success' });
  });
  const server = app.listen(Number(process.env.BARE_PORT), '127.0.0.1', () => console.log('bare ready'));
  const stop = () => server.close(() => void pool.end().then(() => process.exit(0)));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
