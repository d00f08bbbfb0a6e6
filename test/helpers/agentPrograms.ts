/**
 * Agent programs for tests: a node script speaking the agent protocol (version 3) that appends its
 * process id to a file as it starts, so that a test counts the programs a server really started,
 * and checks that each is gone.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface AgentProgram {
  /** The command line that starts it. */
  readonly command: string;
  /** The process ids of the programs started so far, in order. */
  pids(): number[];
}

/** Writes `<dir>/<name>.js`, which answers each observation with the actions of `actions`, a JavaScript expression of `message`. */
export function writeAgentProgram(dir: string, name: string, actions: string): AgentProgram {
  const program = join(dir, `${name}.js`);
  const started = join(dir, `${name}.pids`);
  writeFileSync(
    program,
    [
      `require('fs').appendFileSync(${JSON.stringify(started)}, process.pid + "\\n");`,
      "const lines = require('readline').createInterface({ input: process.stdin });",
      'const say = (answer) => process.stdout.write(JSON.stringify(answer) + "\\n");',
      'lines.on("line", (line) => {',
      '  const message = JSON.parse(line);',
      `  if (message.type === "hello") say({ type: "hello", protocol: message.protocol, version: 3, name: ${JSON.stringify(name)} });`,
      '  else if (message.type === "reset") say({ type: "ready" });',
      `  else if (message.type === "observe") say({ type: "act", actions: ${actions} });`,
      '  else if (message.type === "close") process.exit(0);',
      '});',
    ].join('\n'),
  );
  return {
    command: `node ${program}`,
    pids: () => (existsSync(started) ? readFileSync(started, 'utf8').trim().split('\n').map(Number) : []),
  };
}

/** Whether process `pid` still runs. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
