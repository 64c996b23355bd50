import { Router } from 'express';

/** SPEC 4.1 and 4.2: a status marker and a liveness answer, nothing administrative. */
export function statusRoutes(r: Router = Router()): Router {
  r.get('/api', (_req, res) => {
    res.json({ status: 'OK' });
  });
  r.get('/api/health', (_req, res) => {
    res.json({ status: 'ok' });
  });
  return r;
}
