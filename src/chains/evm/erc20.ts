import { AbiCoder, getAddress, id, Interface, type Log } from 'ethers';

export const TRANSFER_TOPIC = id('Transfer(address,address,uint256)');
export const ERC20 = new Interface([
  'function transfer(address to, uint256 amount) returns (bool)',
  'function balanceOf(address owner) view returns (uint256)',
  'event Transfer(address indexed from, address indexed to, uint256 value)',
]);

/** A standard Transfer log: three topics, the value in data. Anything else is not a deposit. */
export function parseTransferLog(log: Pick<Log, 'topics' | 'data'>): { from: string; to: string; value: bigint } | undefined {
  if (log.topics.length !== 3 || log.topics[0] !== TRANSFER_TOPIC) return undefined;
  const word = (t: string) => getAddress('0x' + t.slice(26));
  try {
    const [value] = AbiCoder.defaultAbiCoder().decode(['uint256'], log.data) as unknown as [bigint];
    return { from: word(log.topics[1]), to: word(log.topics[2]), value };
  } catch {
    return undefined;
  }
}
