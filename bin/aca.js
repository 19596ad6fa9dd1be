#!/usr/bin/env node
'use strict';
// A reader that stops early (`aca log … | head`) closes the pipe: that ends the output, it is not an error.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err) => {
    if (err && err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw err;
  });
}
require('../dist/cli/main.js')
  .main(process.argv.slice(2))
  .then((code) => {
    process.exitCode = code;
  })
  .catch((err) => {
    console.error(`aca: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  });
