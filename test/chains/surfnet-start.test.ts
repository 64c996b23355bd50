import { PublicKey } from '@solana/web3.js';
import fs from 'node:fs';
import path from 'node:path';
import * as processes from '../../devnet/process';
import { startSurfnet, threadSurfnet } from '../../devnet/surfnet';
import { tmpDir } from '../helpers/nodes';

/**
 * surfnet chooses its own ports; a CI run saw another process take its web-socket port first, and its
 * web-socket thread panicked while the start waited for ever. A start that panics is stopped and made
 * again. The first start here is a process that prints that panic and hangs, as surfnet's did.
 */
it('a surfnet start that panicked before it printed its URLs is stopped and made again', async () => {
  const dir = tmpDir('gw-surfnet-start-');
  const pidFile = path.join(dir, 'panicked.pid');
  const script = path.join(dir, 'panics.cjs');
  fs.writeFileSync(
    script,
    `require('fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid));
process.stderr.write("\\nthread 'WebSocket RPC Handler' (15101) panicked at tokio-1.52.3/src/runtime/blocking/shutdown.rs:51:21:\\nCannot drop a runtime in a context where blocking is not allowed.\\n");
setInterval(() => {}, 1000);
`,
  );
  const real = processes.dieWithParent;
  let calls = 0;
  const spy = jest.spyOn(processes, 'dieWithParent').mockImplementation((cmd: string, args: string[]) => (++calls === 1 ? real(process.execPath, [script]) : real(cmd, args)));
  try {
    const sn = await startSurfnet();
    try {
      expect(calls).toBe(2);
      expect(await sn.connection.getSlot()).toBeGreaterThan(0);
      // Its setup ran on the surfnet of the second start: the test mint's supply is there.
      expect((await sn.connection.getTokenSupply(new PublicKey(sn.tokens.sol_usdc))).value.amount).toBe('1000000000000000');
    } finally {
      await sn.stop();
    }
    // The panicked start's process was stopped, not left holding what it had.
    const pid = Number(fs.readFileSync(pidFile, 'utf8'));
    await expect(waitGone(pid)).resolves.toBe(true);
  } finally {
    spy.mockRestore();
  }
}, 120_000);

async function waitGone(pid: number): Promise<boolean> {
  for (let i = 0; i < 100; i++) {
    try {
      process.kill(pid, 0);
    } catch {
      return true;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

it("surfnet on a thread of this process (npm start's): it answers, carries the setup, and stop() ends it", async () => {
  const sn = await startSurfnet({ inThread: true });
  try {
    expect(sn.pid).toBeUndefined();
    const first = await sn.connection.getSlot();
    await new Promise((r) => setTimeout(r, 500));
    expect(await sn.connection.getSlot()).toBeGreaterThan(first);
    expect((await sn.connection.getTokenSupply(new PublicKey(sn.tokens.sol_usdc))).value.amount).toBe('1000000000000000');
  } finally {
    await sn.stop();
  }
  // Stopped: its RPC port no longer answers.
  await expect(fetch(sn.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"getSlot"}' })).rejects.toThrow();
}, 120_000);

it('a thread start that fails starts surfnet in a process of its own instead', async () => {
  const broken = path.join(tmpDir('gw-surfnet-thread-'), 'broken.cjs');
  fs.writeFileSync(broken, "throw new Error('napi module failed to load');\n");
  const sn = await threadSurfnet({ offline: true, blockProductionMode: 'clock', slotTimeMs: 100 }, 20_000, broken);
  try {
    expect(sn.pid).toEqual(expect.any(Number));
    const slot = await fetch(sn.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"getSlot"}' });
    expect(((await slot.json()) as { result: number }).result).toBeGreaterThanOrEqual(0);
  } finally {
    await sn.stop();
  }
  await expect(waitGone(sn.pid!)).resolves.toBe(true);
}, 120_000);

/**
 * surfnet queues an event per slot for the program that embeds it and stops producing slots once about
 * 1,000 wait: the child takes them every second. Both ways npm start and the tests run it go past that.
 */
describe.each([
  ['a process of its own', false],
  ['a thread of this process', true],
])('surfnet in %s', (_, inThread) => {
  it('keeps making slots past the 1,024 events surfnet queues', async () => {
    const sn = await startSurfnet({ slotTimeMs: 20, inThread });
    try {
      const deadline = Date.now() + 100_000;
      let slot = 0;
      while (slot < 1_200 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 1000));
        slot = await Promise.race([sn.connection.getSlot(), new Promise<number>((r) => setTimeout(() => r(slot), 3000))]);
      }
      expect(slot).toBeGreaterThanOrEqual(1_200);
    } finally {
      await sn.stop();
    }
  }, 150_000);
});
