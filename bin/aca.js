#!/usr/bin/env node
'use strict';
require('../dist/cli/main.js')
  .main(process.argv.slice(2))
  .then((code) => {
    process.exitCode = code;
  })
  .catch((err) => {
    console.error(`aca: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  });
