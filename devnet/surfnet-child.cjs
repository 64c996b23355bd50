// Runs surfpool's surfnet (a napi module) apart from the event loop that started it, so that the chain keeps
// answering whatever that loop is doing: in a process of its own (stopped by PID), or on a worker thread of
// the process (`npm start`, where a second Node process would cost its own copy of Node's memory).
// Process: argument 1 is the JSON config for Surfnet.startWithConfig; prints one line, {"rpcUrl","wsUrl"},
// once the RPC is up; SIGTERM or SIGINT stops the surfnet and exits. Started under setpriv --pdeathsig
// (process.ts). Thread: the config is workerData; it posts {rpcUrl, wsUrl}, and stops on the message 'stop'.
'use strict';
const { isMainThread, parentPort, workerData } = require('node:worker_threads');
const { Surfnet } = require('@solana/surfpool-linux-x64-gnu');

/**
 * surfnet queues an event per slot (and per transaction) for the program that embeds it; once about 1,000
 * are queued and nobody takes them, the chain stops producing slots and its RPC stops answering. Taken
 * (and dropped) every second, it runs for as long as it is kept.
 */
function drainEvents(sn) {
  const timer = setInterval(() => sn.drainEvents(), 1000);
  return () => clearInterval(timer);
}

if (isMainThread) {
  const sn = Surfnet.startWithConfig(JSON.parse(process.argv[2] || '{}'));
  drainEvents(sn);
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
} else {
  const sn = Surfnet.startWithConfig(workerData || {});
  const stopDraining = drainEvents(sn);
  parentPort.on('message', (m) => {
    if (m !== 'stop') return;
    stopDraining();
    try {
      sn.stop();
    } finally {
      parentPort.close();
    }
  });
  parentPort.postMessage({ rpcUrl: sn.rpcUrl, wsUrl: sn.wsUrl });
}
