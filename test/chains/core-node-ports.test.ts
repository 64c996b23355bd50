import net from 'node:net';
import * as devserver from '../../src/temporal/devserver';
import { startLitecoind } from '../../src/chains/devnet/litecoind';
import { BitcoinRpc } from '../../src/chains/utxo/rpc';
import { tmpDir } from '../helpers/nodes';

/**
 * A free port is only free when it is looked up: another process may bind it before the node does (a CI
 * run lost a devnet start that way). The node is then started again on new ports.
 */
it('a Core node whose RPC port was taken before it could bind it starts again on new ports', async () => {
  const squatter = net.createServer();
  await new Promise<void>((r) => squatter.listen(0, '127.0.0.1', r));
  const taken = (squatter.address() as net.AddressInfo).port;
  const real = devserver.freePort;
  let calls = 0;
  // The first port handed out (the first start's RPC port) is one another process holds.
  const spy = jest.spyOn(devserver, 'freePort').mockImplementation((host: string, preferred?: number) => (++calls === 1 ? Promise.resolve(taken) : real(host, preferred)));
  try {
    const node = await startLitecoind({ dir: tmpDir('gw-core-ports-') });
    try {
      expect(new URL(node.rpcUrl).port).not.toBe(String(taken));
      expect(await new BitcoinRpc(node.rpcUrl).call<number>('getblockcount')).toBeGreaterThanOrEqual(101);
      expect(calls).toBeGreaterThanOrEqual(3); // two ports for the lost start, then new ones
    } finally {
      await node.stop();
    }
  } finally {
    spy.mockRestore();
    squatter.close();
  }
}, 120_000);
