/**
 * The honest merchant of bench/create-flood.ts, in a process of its own so that the flood's client (autocannon
 * and its response handling) does not delay its requests or its clock: one create a second from its own
 * address for `seconds`, then one JSON line on stdout with its successes, latencies and failures. Its first
 * create, made before the flood starts (it prints `warm` then), is not among them: the merchant was already
 * running when the flood began.
 *
 *   tsx bench/lib/honest-merchant.ts <base URL> <ticker> <address_out> <seconds>   (starts on a line on stdin)
 */
const [base, ticker, addressOut, seconds] = process.argv.slice(2);
const out = { ok: 0, total: 0, latencies: [] as number[], failures: {} as Record<string, number> };
let serial = 0;

async function createOnce(): Promise<Response> {
  return fetch(`${base}/api/${ticker}/create`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': '198.51.100.7' },
    body: JSON.stringify({ callback_url: `https://shop.example/honest/${process.pid}/${++serial}`, address_out: addressOut }),
    signal: AbortSignal.timeout(30_000),
  });
}

async function main(): Promise<void> {
  if ((await createOnce()).status !== 200) throw new Error('the warm-up create failed');
  process.stdout.write('warm\n');
  await new Promise((r) => process.stdin.once('data', r));
  const until = performance.now() + Number(seconds) * 1_000;
  while (performance.now() < until) {
    const started = performance.now();
    try {
      const r = await createOnce();
      const body = (await r.json()) as { code?: number };
      out.total++;
      out.latencies.push(performance.now() - started);
      if (r.status === 200) out.ok++;
      else out.failures[`${r.status} ${body.code}`] = (out.failures[`${r.status} ${body.code}`] ?? 0) + 1;
    } catch (e) {
      out.total++;
      out.failures[(e as Error).name] = (out.failures[(e as Error).name] ?? 0) + 1;
    }
    await new Promise((r) => setTimeout(r, Math.max(0, started + 1_000 - performance.now())));
  }
  process.stdout.write(`${JSON.stringify(out)}\n`);
  process.stdin.destroy();
}

void main();
