// Runs surfpool's surfnet (a napi module) in a process of its own, so that the chain keeps answering
// whatever the event loop of the process that started it is doing, and so that it is stopped by PID.
// Argument: the JSON config for Surfnet.startWithConfig. Prints one line, {"rpcUrl","wsUrl"}, once the
// RPC is up; SIGTERM or SIGINT stops the surfnet and exits. Started under setpriv --pdeathsig (process.ts).
'use strict';
const { Surfnet } = require('@solana/surfpool-linux-x64-gnu');

const sn = Surfnet.startWithConfig(JSON.parse(process.argv[2] || '{}'));
process.stdout.write(JSON.stringify({ rpcUrl: sn.rpcUrl, wsUrl: sn.wsUrl }) + '\n');
const stop = () => {
  try {
    sn.stop();
  } finally {
    process.exit(0);
  }
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
// The parent's end of stdin closes when it dies, even where setpriv is missing.
process.stdin.on('end', stop).resume();
