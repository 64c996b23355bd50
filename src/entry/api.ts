// API-only process (compose service gateway-api): public HTTP API and /metrics; no worker, no watchers,
// and no secret: it refuses a seed or a signing key, and derives deposit addresses from public material.
import { startApiRuntime } from '../runtime/api';
import { buildApiServices } from '../runtime/services';
import { runProcess } from './common';

// With its own database role (drizzle/0000_init.sql) the API may not migrate: the worker does.
runProcess('API', (cfg, database) => buildApiServices(cfg, database), async (services, stops) => {
  const api = await startApiRuntime(services);
  stops.push(() => api.stop());
  return { url: api.url };
}, { migrate: 'if-permitted' });
