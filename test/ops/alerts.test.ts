import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { registry } from '../../src/observability/metrics';
import '../../src/observability/chain-metrics';
import '../../src/observability/payment-stages';

/**
 * The Prometheus alert rules of ops/prometheus: promtool (Debian's prometheus package) checks them and runs
 * their unit tests (alerts.test.yml), and every metric a rule reads is one the gateway exports.
 */
const dir = path.resolve(__dirname, '../../ops/prometheus');
const promtool = (args: string[]) => spawnSync('promtool', args, { cwd: dir, encoding: 'utf8', timeout: 60_000 });

describe('ops/prometheus alert rules', () => {
  it('are valid rules (promtool check rules)', () => {
    const r = promtool(['check', 'rules', 'alerts.yml']);
    expect(r.error).toBeUndefined();
    expect(`${r.stdout}${r.stderr}`).toContain('SUCCESS: 8 rules found');
    expect(r.status).toBe(0);
  });

  it('fire when they should and not before (promtool test rules alerts.test.yml)', () => {
    const r = promtool(['test', 'rules', 'alerts.test.yml']);
    expect(r.error).toBeUndefined();
    expect({ status: r.status, out: `${r.stdout}${r.stderr}` }).toEqual({ status: 0, out: expect.stringContaining('SUCCESS') as unknown as string });
  });

  it('read only metrics the gateway exports, and every rule has a test', async () => {
    const rules = fs.readFileSync(path.join(dir, 'alerts.yml'), 'utf8');
    const used = new Set(rules.match(/\bgateway_[a-z_]+/g) ?? []);
    const exported = new Set((await registry.getMetricsAsJSON()).map((m) => m.name));
    expect([...used].filter((m) => !exported.has(m))).toEqual([]);
    const alerts = [...rules.matchAll(/- alert: (\w+)/g)].map((m) => m[1]);
    const tests = fs.readFileSync(path.join(dir, 'alerts.test.yml'), 'utf8');
    expect(alerts.filter((a) => !tests.includes(`alertname: ${a}`))).toEqual([]);
  });
});
