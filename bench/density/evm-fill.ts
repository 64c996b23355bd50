import { Contract, ContractFactory, JsonRpcProvider, MaxUint256, Network, Wallet, type InterfaceAbi } from 'ethers';
import type { AnvilDevnet } from '../../devnet/anvil';

/**
 * Fills anvil blocks at Ethereum mainnet's density for the watcher: per block 200 transactions, half of
 * them ether transfers (a receipt each for the watcher) and half calls of a fan-out contract that moves the
 * test token to four recipients (four Transfer logs each): 400 ERC-20 Transfer logs. Automine is off; each
 * block is mined once its transactions are in the pool.
 */
const FAN = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;
interface T { function transferFrom(address, address, uint256) external returns (bool); }
contract Fan {
    function pay(T t, address[] calldata to, uint256 amount) external {
        for (uint256 i = 0; i < to.length; i++) t.transferFrom(msg.sender, to[i], amount);
    }
}
`;

function compileFan(): { abi: InterfaceAbi; bytecode: string } {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const solc = require('solc') as { compile(input: string): string };
  const input = { language: 'Solidity', sources: { 'Fan.sol': { content: FAN } }, settings: { optimizer: { enabled: true, runs: 200 }, evmVersion: 'cancun', outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } } };
  const out = JSON.parse(solc.compile(JSON.stringify(input))) as { contracts: Record<string, Record<string, { abi: InterfaceAbi; evm: { bytecode: { object: string } } }>> };
  const c = out.contracts['Fan.sol'].Fan;
  return { abi: c.abi, bytecode: '0x' + c.evm.bytecode.object };
}

export async function fillAnvil(node: AnvilDevnet, blocks: number, perBlock = 200): Promise<{ from: number; to: number; logs: number }> {
  const net = Network.from(node.chainId);
  const provider = new JsonRpcProvider(node.rpcUrl, net, { staticNetwork: net, cacheTimeout: -1, batchMaxCount: 100 });
  try {
    const customer = new Wallet(node.customerKey, provider);
    const token = node.tokens.erc20_usdt;
    const { abi, bytecode } = compileFan();
    const fan = (await (await new ContractFactory(abi, bytecode, customer).deploy()).waitForDeployment()) as unknown as Contract;
    const fanAddress = await fan.getAddress();
    await (await new Contract(token, ['function approve(address, uint256) returns (bool)'], customer).getFunction('approve')(fanAddress, MaxUint256)).wait();
    const recipients = Array.from({ length: 400 }, () => Wallet.createRandom().address);
    await provider.send('evm_setAutomine', [false]);
    const from = await provider.getBlockNumber();
    let nonce = await provider.getTransactionCount(customer.address, 'pending');
    const fee = await provider.getFeeData();
    const common = { chainId: net.chainId, type: 2, maxFeePerGas: fee.maxFeePerGas! * 4n, maxPriorityFeePerGas: fee.maxPriorityFeePerGas! };
    let logs = 0;
    for (let b = 0; b < blocks; b++) {
      const raw: string[] = [];
      for (let i = 0; i < perBlock; i++) {
        const tx =
          i % 2 === 0
            ? { to: recipients[(b * perBlock + i) % recipients.length], value: 10n ** 12n + BigInt(i), gasLimit: 21_000n }
            : { to: fanAddress, data: fan.interface.encodeFunctionData('pay', [token, recipients.slice((i * 4) % 396, ((i * 4) % 396) + 4), 1_000n + BigInt(i)]), gasLimit: 200_000n };
        if (i % 2 === 1) logs += 4;
        raw.push(await customer.signTransaction({ ...tx, nonce: nonce++, ...common }));
      }
      await Promise.all(raw.map((r) => provider.send('eth_sendRawTransaction', [r])));
      await provider.send('evm_mine', []);
    }
    await provider.send('evm_setAutomine', [true]);
    return { from, to: await provider.getBlockNumber(), logs };
  } finally {
    provider.destroy();
  }
}
