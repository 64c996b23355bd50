// Where the set-up scripts look for programs (setup-temporal.js, setup-temporal-server.js, test-prerequisites.js).
'use strict';
const fs = require('node:fs');
const path = require('node:path');

/** Whether `p` is an executable file. */
const exe = (p) => {
  try {
    fs.accessSync(p, fs.constants.X_OK);
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
};

/** Whether `name` is an executable in a folder of PATH. */
const onPath = (name) => (process.env.PATH || '').split(path.delimiter).some((d) => d && exe(path.join(d, name)));

module.exports = { exe, onPath };
