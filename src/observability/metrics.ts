import http from 'node:http';
import { AggregatorRegistry, Counter, Gauge, Histogram, Registry, collectDefaultMetrics, type MetricObjectWithValues, type MetricValue } from 'prom-client';

/** One registry per process; the API and the worker each expose theirs on the admin port. */
export const registry = new Registry();
collectDefaultMetrics({ register: registry });

export const httpRequests = new Counter({
  name: 'gateway_http_requests_total',
  help: 'Public API requests by method, route and status',
  labelNames: ['method', 'route', 'status'] as const,
  registers: [registry],
});

export const httpDuration = new Histogram({
  name: 'gateway_http_request_duration_seconds',
  help: 'Public API request latency',
  labelNames: ['method', 'route'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers: [registry],
});

export const logsCacheReads = new Counter({
  name: 'gateway_logs_cache_reads_total',
  help: 'GET /logs reads the API could answer from its kept bodies, by result (hit, miss)',
  labelNames: ['result'] as const,
  registers: [registry],
});

export const depositsObserved = new Counter({
  name: 'gateway_deposits_observed_total',
  help: 'Deposits observed by the watchers, by ticker',
  labelNames: ['ticker'] as const,
  registers: [registry],
});

export const createsRateLimited = new Counter({
  name: 'gateway_creates_rate_limited_total',
  help: 'Creates refused with 429 because their client passed CREATE_RATE_LIMIT',
  registers: [registry],
});

export const addressPoolEmpty = new Counter({
  name: 'gateway_address_pool_empty_total',
  help: 'Times a create found no pre-derived deposit address free (it waits for the refill), by network',
  labelNames: ['network'] as const,
  registers: [registry],
});

export const addressPoolFree = new Gauge({
  name: 'gateway_address_pool_free',
  help: 'Free pre-derived deposit addresses after the last refill, by network',
  labelNames: ['network'] as const,
  registers: [registry],
});

export const evmTracing = new Gauge({
  name: 'gateway_evm_tracing',
  help: 'Whether the EVM node serves call traces (1) or not (0), by network: without them, ether a contract sends to a deposit address is not seen',
  labelNames: ['network'] as const,
  registers: [registry],
});

export const forwards = new Counter({
  name: 'gateway_forwards_total',
  help: 'Forward transactions by ticker and outcome (broadcast, confirmed, failed)',
  labelNames: ['ticker', 'outcome'] as const,
  registers: [registry],
});

export const deliveryAttempts = new Counter({
  name: 'gateway_delivery_attempts_total',
  help: 'Merchant callback delivery attempts by stage and outcome',
  labelNames: ['stage', 'outcome'] as const,
  registers: [registry],
});

/** One answered public API request: its count by status and its latency (seconds) by route. */
export function observeHttp(method: string, route: string, status: number, seconds: number): void {
  httpDuration.observe({ method, route }, seconds);
  httpRequests.inc({ method, route, status: String(status) });
}

type ThreadMetrics = MetricObjectWithValues<MetricValue<string>>[];
const processWide = (m: ThreadMetrics[number]) => m.name.startsWith('process_');

/** The admin server: GET /metrics in Prometheus text format, on its own port, apart from the public API. */
export async function startMetricsServer(
  host: string,
  port: number,
  /** Other threads' registries of this process (the embedded API thread), summed with this one's. */
  others: Array<() => Promise<ThreadMetrics>> = [],
): Promise<{ port: number; close(): Promise<void> }> {
  const text = async () => {
    if (others.length === 0) return registry.metrics();
    const [own, ...theirs] = await Promise.all([registry.getMetricsAsJSON(), ...others.map((f) => f())]);
    // A process reading (CPU, memory, descriptors, start time) is the same from every thread: this thread's
    // stands alone, where prom-client's aggregators would sum it, or omit the start time.
    return AggregatorRegistry.aggregate([
      own.map((m) => (processWide(m) ? { ...m, aggregator: 'first' as const } : m)),
      ...theirs.map((ms) => ms.filter((m) => !processWide(m))),
    ]).metrics();
  };
  const server = http.createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/metrics') {
      text()
        .then((text) => {
          res.writeHead(200, { 'content-type': registry.contentType });
          res.end(text);
        })
        .catch(() => {
          res.writeHead(500);
          res.end();
        });
      return;
    }
    res.writeHead(404);
    res.end();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const bound = (server.address() as { port: number }).port;
  return { port: bound, close: () => new Promise<void>((r) => server.close(() => r())) };
}
