/**
 * A built-in agent as a program that speaks the agent protocol (version 3), for the agents
 * benchmark: `node builtin-agent.js scripted` (the leader) or `node builtin-agent.js heuristic`
 * (a follower). It plays exactly as the built-in does in process, so the time a game takes
 * between two of these, against the same pair in process, is the protocol's cost.
 */
import { createInterface } from 'node:readline';
import { catalogueEntry } from '../../shared/agents/catalogue';
import { PROTOCOL_NAME, PROTOCOL_VERSION, type HostMessage } from '../../shared/agents/protocol';
import type { FollowerAgent, LeaderAgent } from '../../shared/agents/types';

const name = process.argv[2] ?? 'heuristic';
const agent: FollowerAgent | LeaderAgent | null = catalogueEntry(name)?.create?.() ?? null;
if (!agent) {
  process.stderr.write(`builtin-agent: no built-in agent ${JSON.stringify(name)}\n`);
  process.exit(2);
}

const say = (message: object) => process.stdout.write(`${JSON.stringify(message)}\n`);
/** The map as last sent: the host leaves it out of an observation when it has not changed. */
let map: unknown = null;

createInterface({ input: process.stdin }).on('line', async (line) => {
  const message = JSON.parse(line) as HostMessage;
  if (message.type === 'hello') say({ type: 'hello', protocol: PROTOCOL_NAME, version: PROTOCOL_VERSION, name: agent.name, oracle: false });
  else if (message.type === 'reset') {
    map = null;
    await agent.reset(message.episode);
    say({ type: 'ready' });
  } else if (message.type === 'observe') {
    if (message.observation.map) map = message.observation.map;
    const answer = await (agent.act as (observation: unknown) => unknown)({ ...message.observation, map });
    say(Array.isArray(answer) ? { type: 'act', actions: answer } : { type: 'act', action: answer });
  } else if (message.type === 'close') process.exit(0);
});
