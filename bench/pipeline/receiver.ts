import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type Request, type Response } from 'express';
import { verifyCallback } from '../../src/callbacks/verify';

/**
 * The benchmark's merchant: verifies each callback's signature (SPEC 5) and notes when it arrived (the
 * moment its request reached the server, before the body was read) and its fields. Answers 200 to every
 * verified callback, so each confirmed one is delivered on its first attempt.
 */
export interface Arrival {
  at: number;
  fields: Record<string, unknown>;
}

export interface Receiver {
  url: string;
  /** Verified confirmed callbacks (result=sent, pending=0), first arrival per payment UUID. */
  confirmed: Map<string, Arrival>;
  /** Verified callbacks of any kind, and those that failed verification. */
  counts(): { verified: number; rejected: number; duplicates: number };
  close(): Promise<void>;
}

export async function startReceiver(publicKey: string): Promise<Receiver> {
  const confirmed = new Map<string, Arrival>();
  let verified = 0;
  let rejected = 0;
  let duplicates = 0;
  const app = express();
  app.use((req, _res, next) => {
    (req as Request & { arrivedAt?: number }).arrivedAt = Date.now();
    next();
  });
  app.use(express.raw({ type: () => true, limit: '64kb' }));
  app.all('/{*path}', (req: Request, res: Response) => {
    const at = (req as Request & { arrivedAt?: number }).arrivedAt ?? Date.now();
    const rawBody = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const result = verifyCallback({ method: req.method, url: req.originalUrl, headers: req.headers, rawBody }, publicKey, Date.now());
    if (!result.ok) {
      rejected++;
      res.status(401).type('text/plain').send(`rejected: ${result.reason}`);
      return;
    }
    verified++;
    const fields = JSON.parse(rawBody.toString('utf8')) as Record<string, unknown>;
    if (fields.result === 'sent' && String(fields.pending) === '0') {
      const uuid = String(fields.uuid);
      if (confirmed.has(uuid)) duplicates++;
      else confirmed.set(uuid, { at, fields });
    }
    res.status(200).type('text/plain').send('ok');
  });
  const server = http.createServer(app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    confirmed,
    counts: () => ({ verified, rejected, duplicates }),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
