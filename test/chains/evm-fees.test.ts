import { JsonRpcProvider, Network } from 'ethers';
import { startAnvil, type AnvilDevnet } from '../../devnet/anvil';
import { eip1559Fees, FEE_READING_MS } from '../../src/chains/evm/fees';
import { tmpDir } from '../helpers/nodes';

/** EIP-1559 fee readings on a real anvil: one eth_feeHistory serves a provider's callers for FEE_READING_MS. */
let node: AnvilDevnet;

beforeAll(async () => {
  node = await startAnvil({ dir: tmpDir('gw-fees-') });
}, 120_000);

afterAll(async () => {
  await node?.stop();
});

function provider(): { provider: JsonRpcProvider; feeHistoryCalls: () => number } {
  const net = Network.from(node.chainId);
  const p = new JsonRpcProvider(node.rpcUrl, net, { staticNetwork: net, cacheTimeout: -1, batchMaxCount: 1 });
  const send = jest.spyOn(p, 'send');
  return { provider: p, feeHistoryCalls: () => send.mock.calls.filter(([method]) => method === 'eth_feeHistory').length };
}

describe('eip1559Fees', () => {
  it('callers within FEE_READING_MS share one reading, concurrent ones too; a later caller reads again', async () => {
    const { provider: p, feeHistoryCalls } = provider();
    const [a, b] = await Promise.all([eip1559Fees(p, 'default'), eip1559Fees(p, 'default')]);
    const c = await eip1559Fees(p, 'default');
    expect(feeHistoryCalls()).toBe(1);
    expect(b).toBe(a);
    expect(c).toBe(a);
    expect(a.maxFeePerGas).toBeGreaterThan(a.maxPriorityFeePerGas);
    // Another priority is another reading.
    await eip1559Fees(p, 'fast');
    expect(feeHistoryCalls()).toBe(2);
    await new Promise((r) => setTimeout(r, FEE_READING_MS + 50));
    await eip1559Fees(p, 'default');
    expect(feeHistoryCalls()).toBe(3);
    p.destroy();
  });

  it('a fresh reading is made now, whatever is kept, and serves the callers after it', async () => {
    const { provider: p, feeHistoryCalls } = provider();
    const first = await eip1559Fees(p, 'default');
    // The next block's base fee changes after the first reading (the published minimum must follow it).
    await p.send('anvil_setNextBlockBaseFeePerGas', [`0x${(2000n * 10n ** 9n).toString(16)}`]);
    await p.send('evm_mine', []);
    const fresh = await eip1559Fees(p, 'default', { fresh: true });
    expect(feeHistoryCalls()).toBe(2);
    expect(fresh.maxFeePerGas).toBeGreaterThan(1000n * 10n ** 9n);
    expect(first.maxFeePerGas).toBeLessThan(1000n * 10n ** 9n);
    expect(await eip1559Fees(p, 'default')).toBe(fresh);
    expect(feeHistoryCalls()).toBe(2);
    p.destroy();
  });

  it('a reading that failed is not kept: the next caller asks the node again', async () => {
    const { provider: p, feeHistoryCalls } = provider();
    jest.spyOn(p, 'send').mockImplementationOnce(async () => {
      throw new Error('node away');
    });
    await expect(eip1559Fees(p, 'slow')).rejects.toThrow('node away');
    const fees = await eip1559Fees(p, 'slow');
    expect(fees.maxFeePerGas).toBeGreaterThan(0n);
    expect(feeHistoryCalls()).toBe(2);
    p.destroy();
  });
});
