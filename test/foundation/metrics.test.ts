import { Counter, Registry, collectDefaultMetrics } from 'prom-client';
import { registry, startMetricsServer } from '../../src/observability/metrics';

/** One reading of a metric line (no labels) from Prometheus text. */
function readings(text: string, name: string): number[] {
  return text
    .split('\n')
    .filter((l) => l.startsWith(`${name} `))
    .map((l) => Number(l.slice(name.length + 1)));
}

describe('the admin /metrics of a process with an API thread', () => {
  it('sums what each thread counts, and shows the process readings once, as the main thread reads them', async () => {
    // The API thread's registry: the same default metrics (it loads the same module) and its own counts.
    const thread = new Registry();
    collectDefaultMetrics({ register: thread });
    const name = 'gateway_metrics_test_requests_total';
    new Counter({ name, help: 'test', registers: [registry] }).inc(2);
    new Counter({ name, help: 'test', registers: [thread] }).inc(3);
    const server = await startMetricsServer('127.0.0.1', 0, [() => thread.getMetricsAsJSON()]);
    try {
      const text = await (await fetch(`http://127.0.0.1:${server.port}/metrics`)).text();
      expect(readings(text, name)).toEqual([5]);
      const own = await registry.getMetricsAsJSON();
      const value = (n: string) => own.find((m) => m.name === n)!.values[0].value;
      // Summed by prom-client's aggregator they read double; the start time would be left out.
      expect(readings(text, 'process_start_time_seconds')).toEqual([value('process_start_time_seconds')]);
      expect(readings(text, 'process_max_fds')).toEqual([value('process_max_fds')]);
      // Per-thread readings (each V8 heap) are still summed over the threads.
      expect(readings(text, 'nodejs_heap_size_total_bytes')).toHaveLength(1);
    } finally {
      await server.close();
      registry.removeSingleMetric(name);
    }
  });
});
