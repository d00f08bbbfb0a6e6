#!/usr/bin/env node
// A protocol agent for the benchmark: turns right nine times, then says DONE. Its twin in-process
// agent does the same, so the time difference is the protocol's cost.
const readline = require('node:readline');
const lines = readline.createInterface({ input: process.stdin });
let turns = 0;
lines.on('line', (line) => {
  const message = JSON.parse(line);
  const answer = (value) => process.stdout.write(`${JSON.stringify(value)}\n`);
  if (message.type === 'hello') answer({ type: 'hello', protocol: 'cerealbar-agent', version: 2, name: 'turner', oracle: false });
  else if (message.type === 'reset') answer({ type: 'ready' });
  else if (message.type === 'observe') answer({ type: 'act', action: ++turns % 10 === 0 ? 'DONE' : 'RR' });
  else if (message.type === 'close') process.exit(0);
});
