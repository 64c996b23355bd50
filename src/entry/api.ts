// API-only process (compose service gateway-api): public HTTP API and /metrics; no worker, no watchers.
import { startApiRuntime } from '../runtime/api';
import { runProcess } from './common';

runProcess('API', async (services, stops) => {
  const api = await startApiRuntime(services);
  stops.push(() => api.stop());
  return { url: api.url };
});
