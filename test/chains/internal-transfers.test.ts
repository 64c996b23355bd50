import {
  callTreeOfParity,
  groupParityByTransaction,
  transfersOfCallTree,
  type CallFrame,
  type ParityTrace,
} from '../../src/chains/evm/internal-transfers';

/**
 * The call-trace readers on node answers of both shapes (geth's callTracer and Parity's trace_*), as anvil
 * gave them for the test contracts of test/helpers/payer-contracts.ts: what moved, at which ordinal.
 */
const TX = '0xabc';
const [PAYER, RELAY, A, B, BOMB] = ['0x01', '0x02', '0x0a', '0x0b', '0x0c'];
const call = (type: string, from: string, to: string, value?: bigint, extra: Partial<CallFrame> = {}): CallFrame => ({
  type, from, to, value: value === undefined ? undefined : `0x${value.toString(16)}`, ...extra,
});
const parity = (traceAddress: number[], type: string, action: ParityTrace['action'], extra: Partial<ParityTrace> = {}): ParityTrace => ({
  type, action, traceAddress, transactionHash: TX, ...extra,
});
const hex = (v: bigint) => `0x${v.toString(16)}`;

const cases: Array<{ name: string; tree: CallFrame; traces: ParityTrace[]; moved: Array<[number, string, bigint]> }> = [
  {
    name: 'a forwarder: its one call',
    tree: call('CALL', '0xee', PAYER, 10n, { calls: [call('CALL', PAYER, A, 10n)] }),
    traces: [parity([], 'call', { callType: 'call', from: '0xee', to: PAYER, value: hex(10n) }), parity([0], 'call', { callType: 'call', from: PAYER, to: A, value: hex(10n) })],
    moved: [[0, A, 10n]],
  },
  {
    name: 'reverted relays (caught, ignored) pay nothing, nor anything beneath them; the relay that succeeds pays',
    tree: call('CALL', '0xee', PAYER, 19n, {
      calls: [
        call('CALL', PAYER, RELAY, 7n, { error: 'execution reverted', calls: [call('CALL', RELAY, B, 7n)] }),
        call('CALL', PAYER, RELAY, 7n, { error: 'execution reverted', calls: [call('CALL', RELAY, B, 7n)] }),
        call('STATICCALL', PAYER, RELAY),
        call('CALL', PAYER, RELAY, 5n, { calls: [call('CALL', RELAY, A, 5n)] }),
      ],
    }),
    traces: [
      parity([], 'call', { callType: 'call', from: '0xee', to: PAYER, value: hex(19n) }),
      parity([0], 'call', { callType: 'call', from: PAYER, to: RELAY, value: hex(7n) }, { error: 'Reverted' }),
      parity([0, 0], 'call', { callType: 'call', from: RELAY, to: B, value: hex(7n) }),
      parity([1], 'call', { callType: 'call', from: PAYER, to: RELAY, value: hex(7n) }, { error: 'Reverted' }),
      parity([1, 0], 'call', { callType: 'call', from: RELAY, to: B, value: hex(7n) }),
      parity([2], 'call', { callType: 'staticcall', from: PAYER, to: RELAY, value: '0x0' }),
      parity([3], 'call', { callType: 'call', from: PAYER, to: RELAY, value: hex(5n) }),
      parity([3, 0], 'call', { callType: 'call', from: RELAY, to: A, value: hex(5n) }),
    ],
    moved: [[4, RELAY, 5n], [5, A, 5n]],
  },
  {
    name: 'a DELEGATECALL or CALLCODE showing msg.value moves nothing and takes no ordinal',
    tree: call('CALL', '0xee', PAYER, 11n, { calls: [call('DELEGATECALL', PAYER, A, 11n), call('CALLCODE', PAYER, A, 11n), call('CALL', PAYER, B, 1n)] }),
    traces: [
      parity([], 'call', { callType: 'call', from: '0xee', to: PAYER, value: hex(11n) }),
      parity([0], 'call', { callType: 'delegatecall', from: PAYER, to: A, value: hex(11n) }),
      parity([1], 'call', { callType: 'callcode', from: PAYER, to: A, value: hex(11n) }),
      parity([2], 'call', { callType: 'call', from: PAYER, to: B, value: hex(1n) }),
    ],
    moved: [[0, B, 1n]],
  },
  {
    name: 'a failed transaction moves nothing',
    tree: call('CALL', '0xee', PAYER, 13n, { error: 'execution reverted', calls: [call('CALL', PAYER, A, 13n)] }),
    traces: [
      parity([], 'call', { callType: 'call', from: '0xee', to: PAYER, value: hex(13n) }, { error: 'Reverted' }),
      parity([0], 'call', { callType: 'call', from: PAYER, to: A, value: hex(13n) }),
    ],
    moved: [],
  },
  {
    name: 'CREATE funds the new contract, its SELFDESTRUCT pays the beneficiary; zero-value calls take no ordinal',
    tree: call('CALL', '0xee', PAYER, 17n, {
      calls: [call('CALL', PAYER, '0x04', 0n), call('CREATE', PAYER, BOMB, 17n, { calls: [call('SELFDESTRUCT', BOMB, B, 17n)] })],
    }),
    traces: [
      parity([], 'call', { callType: 'call', from: '0xee', to: PAYER, value: hex(17n) }),
      parity([0], 'call', { callType: 'call', from: PAYER, to: '0x04', value: '0x0' }),
      parity([1], 'create', { from: PAYER, value: hex(17n) }, { result: { address: BOMB } }),
      parity([1, 0], 'suicide', { address: BOMB, refundAddress: B, balance: hex(17n) }),
    ],
    moved: [[0, BOMB, 17n], [1, B, 17n]],
  },
];

describe.each(cases)('$name', ({ tree, traces, moved }) => {
  const expected = moved.map(([ordinal, to, value]) => ({ ordinal, to, value }));
  const pick = (list: ReturnType<typeof transfersOfCallTree>) => list.map(({ ordinal, to, value }) => ({ ordinal, to, value }));
  it('from the callTracer', () => expect(pick(transfersOfCallTree(TX, tree))).toEqual(expected));
  it('from trace_*, in any order the node lists them', () => {
    expect(pick(transfersOfCallTree(TX, callTreeOfParity(traces)!))).toEqual(expected);
    expect(pick(transfersOfCallTree(TX, callTreeOfParity([...traces].reverse())!))).toEqual(expected);
  });
});

it('traces that are not one tree (a missing parent or sibling) are no answer', () => {
  expect(callTreeOfParity([parity([], 'call', { callType: 'call', from: '0xee', to: PAYER }), parity([0, 0], 'call', { callType: 'call', from: PAYER, to: A, value: '0x1' })])).toBeUndefined();
  expect(callTreeOfParity([parity([], 'call', { callType: 'call', from: '0xee', to: PAYER }), parity([1], 'call', { callType: 'call', from: PAYER, to: A, value: '0x1' })])).toBeUndefined();
});

it('trace_block is grouped per transaction; rewards (no transaction) are left out', () => {
  const reward = { type: 'reward', action: { value: '0x1' }, traceAddress: [], transactionHash: null } as ParityTrace;
  const other = parity([], 'call', { callType: 'call', from: '0xee', to: A, value: '0x1' }, { transactionHash: '0xdef' });
  const grouped = groupParityByTransaction([cases[0].traces[0], reward, other, cases[0].traces[1]]);
  expect([...grouped.keys()]).toEqual([TX, '0xdef']);
  expect(grouped.get(TX)).toEqual(cases[0].traces);
});
