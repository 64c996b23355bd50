import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chainConfigFromEnv } from '../../src/chains/config';
import { loadConfig } from '../../src/config';
import { depositQueueOf, workerAssignment } from '../../src/runtime/task-queues';

/** `{NETWORK}_TASK_QUEUE` and `WORKER_TASK_QUEUE`: which worker serves and watches which network. */
describe('task queues of the deposit workflows', () => {
  const env = {
    ETHEREUM_RPC_URL: 'http://127.0.0.1:8545',
    SOLANA_RPC_URL: 'http://127.0.0.1:8899',
    LITECOIN_RPC_URL: 'http://127.0.0.1:9332',
    BITCOIN_RPC_URL: 'http://127.0.0.1:8332',
    LITECOIN_TASK_QUEUE: 'gateway-utxo',
    BITCOIN_TASK_QUEUE: 'gateway-utxo',
  };
  const chains = chainConfigFromEnv(env);

  it('reads a network queue, and refuses a name Temporal would not take', () => {
    expect(chains.litecoin.taskQueue).toBe('gateway-utxo');
    expect(chains.ethereum.taskQueue).toBeUndefined();
    expect(chainConfigFromEnv({ ...env, LITECOIN_TASK_QUEUE: '' }).litecoin.taskQueue).toBeUndefined();
    expect(() => chainConfigFromEnv({ ...env, LITECOIN_TASK_QUEUE: 'utxo queue' })).toThrow('invalid configuration: LITECOIN_TASK_QUEUE must be a task queue name');
    expect(loadConfig({ WORKER_TASK_QUEUE: 'gateway-utxo' }).workerTaskQueue).toBe('gateway-utxo');
    expect(loadConfig({}).workerTaskQueue).toBeUndefined();
    expect(() => loadConfig({ WORKER_TASK_QUEUE: 'a/b' })).toThrow('invalid configuration: WORKER_TASK_QUEUE must be a task queue name');
  });

  it.each([
    ['a worker on the gateway queue', undefined, { taskQueue: 'gateway', networks: ['ethereum', 'solana'], ownsSchedule: true }],
    ['a worker on a network queue', 'gateway-utxo', { taskQueue: 'gateway-utxo', networks: ['litecoin', 'bitcoin'], ownsSchedule: false }],
    ['a worker that names the gateway queue', 'gateway', { taskQueue: 'gateway', networks: ['ethereum', 'solana'], ownsSchedule: true }],
  ])('%s serves and watches the networks whose deposits run there', (_name, workerTaskQueue, expected) => {
    const serves = workerAssignment({ taskQueue: 'gateway', workerTaskQueue }, chains, 'worker');
    expect({ ...serves, networks: [...serves.networks].sort() }).toEqual({ ...expected, networks: [...expected.networks].sort() });
    for (const n of serves.networks) expect(depositQueueOf({ taskQueue: 'gateway' }, chains, n)).toBe(serves.taskQueue);
  });

  it('refuses a worker queue no network runs on, which would poll for nothing while the network goes unwatched', () => {
    expect(() => workerAssignment({ taskQueue: 'gateway', workerTaskQueue: 'gateway-ltc' }, chains, 'worker')).toThrow(
      'invalid configuration: WORKER_TASK_QUEUE=gateway-ltc is the task queue of no configured network',
    );
  });

  it('the embedded gateway serves every network on its queue, and refuses a queue of their own', () => {
    const plain = chainConfigFromEnv({ ETHEREUM_RPC_URL: env.ETHEREUM_RPC_URL, LITECOIN_RPC_URL: env.LITECOIN_RPC_URL });
    expect(workerAssignment({ taskQueue: 'gateway', workerTaskQueue: undefined }, plain, 'embedded')).toEqual({
      taskQueue: 'gateway', networks: ['litecoin', 'ethereum'], ownsSchedule: true,
    });
    expect(() => workerAssignment({ taskQueue: 'gateway', workerTaskQueue: undefined }, chains, 'embedded')).toThrow(
      'invalid configuration: BITCOIN_TASK_QUEUE needs worker processes of its own',
    );
    expect(() => workerAssignment({ taskQueue: 'gateway', workerTaskQueue: 'other' }, plain, 'embedded')).toThrow('WORKER_TASK_QUEUE needs worker processes of its own');
  });

  it('npm start refuses a network queue in one line, before it starts anything', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-queues-'));
    const env = { PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: dir, DEVNET: 'false', LITECOIN_RPC_URL: 'http://127.0.0.1:1', LITECOIN_CHAIN: 'regtest', LITECOIN_TASK_QUEUE: 'gateway-utxo' };
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts'], { cwd: path.resolve(__dirname, '../..'), env, encoding: 'utf8', timeout: 60_000 });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('gateway failed to start: invalid configuration: LITECOIN_TASK_QUEUE needs worker processes of its own');
    // Nothing was started: no database, no Temporal dev server state in the data directory.
    expect(fs.readdirSync(dir)).toEqual([]);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
