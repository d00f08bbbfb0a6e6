#!/usr/bin/env node
// The `cerealbar` command: runs the TypeScript CLI through tsx, so no build step is needed.
require('tsx/cjs');
require('../cli/main.ts')
  .runCli(process.argv.slice(2))
  .then((code) => {
    process.exitCode = code;
    // A failed command must not hang on handles it left open (a server that could not listen).
    if (code !== 0) process.exit(code);
  });
