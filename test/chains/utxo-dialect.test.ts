/**
 * The pure parts of the local-node plumbing: the words each RPC dialect reads as "already have this
 * transaction" (a rebroadcast, never a rejection), and the Depends parsing of the Debian-root install.
 * The dialects themselves run on live nodes in test/chains/conformance.test.ts (Core: litecoind, Knots;
 * btcd: bchd, and btcd when BTCD_PATH names one).
 */
import { dependsOf } from '../../devnet/install/debian-root';
import { BTCD_DIALECT, CORE_DIALECT } from '../../src/chains/utxo/dialect';

test.each([
  [CORE_DIALECT, 'sendrawtransaction: txn-already-in-mempool (-27)', true],
  [CORE_DIALECT, 'sendrawtransaction: Transaction already in block chain (-27)', true],
  [CORE_DIALECT, 'sendrawtransaction: Transaction outputs already in utxo set (-27)', true],
  [CORE_DIALECT, 'sendrawtransaction: bad-txns-inputs-missingorspent (-25)', false],
  [BTCD_DIALECT, 'sendrawtransaction: rejected transaction ab12: already have transaction ab12 (-26)', true],
  [BTCD_DIALECT, 'sendrawtransaction: transaction already exists (-25)', true],
  [BTCD_DIALECT, 'sendrawtransaction: output ab12:0 already spent (-25)', false],
])('%#: %s', (dialect, message, known) => {
  expect(dialect.alreadyKnown(message)).toBe(known);
});

test('Depends and Pre-Depends of an apt-cache record: first alternative, no versions or architectures', () => {
  const record = [
    'Package: bitcoin-knots',
    'Version: 29.4.knots20260508.3-1',
    'Pre-Depends: libc6 (>= 2.34)',
    'Depends: debconf (>= 0.5) | debconf-2.0, libevent-core-2.1-7t64 (>= 2.1.8-stable), libstdc++6:amd64 (>= 14), libzmq5',
    'Recommends: bitcoin-knots-gui',
  ].join('\n');
  expect(dependsOf(record)).toEqual(['libc6', 'debconf', 'libevent-core-2.1-7t64', 'libstdc++6', 'libzmq5']);
});
