#!/usr/bin/env node
// The `cerealbar` command of the container image (deploy/Dockerfile): the compiled CLI in dist/,
// as bin/cerealbar.cjs runs the TypeScript sources through tsx in the repository.
require('../dist/cli/main.js')
  .runCli(process.argv.slice(2))
  .then((code) => {
    process.exitCode = code;
    // A failed command must not hang on handles it left open (a server that could not listen).
    if (code !== 0) process.exit(code);
  });
