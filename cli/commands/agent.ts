/** `cerealbar agent --server URL --agent AGENT`: an agent joins a live game as the follower. */
import { Client, type Room } from '@colyseus/sdk';
import type { Command } from 'commander';
import WebSocket from 'ws';
import { observationFromView } from '../../shared/agents/observation';
import { AGENT_NAMES, createAgent } from '../../shared/agents/node/registry';
import { followerSituation, PlanPlayer } from '../../shared/agents/plans';
import type { AgentAction, FollowerAgent } from '../../shared/agents/types';
import { actionOfCode } from '../../shared/engine/actions';
import { ACTION_MESSAGE, applyViewMessage, joinOptionsSchema, ROOM_NAME, type ClientView, type ViewMessage } from '../../shared/protocol/messages';
import { CliError } from '../errors';

// Node 20 has no global WebSocket; the SDK's reconnection looks for one.
(globalThis as { WebSocket?: unknown }).WebSocket ??= WebSocket;

/** Pause before asking the agent again after the server refused its action. */
const RETRY_AFTER_REFUSAL_MS = 100;

interface AgentCliOptions {
  server: string;
  agent: string;
  pool?: string;
  code?: string;
}

export function registerAgentCommand(program: Command): void {
  program
    .command('agent')
    .description('join a live game on a server as the follower, played by an agent')
    .requiredOption('--server <url>', 'the game server, e.g. http://localhost:2567')
    .requiredOption('--agent <agent>', `a built-in agent (${AGENT_NAMES.join(', ')}) or a command that speaks the agent protocol`)
    .option('--pool <pool>', 'the player pool to join')
    .option('--code <code>', 'the private game to join')
    .action(async (cli: AgentCliOptions) => {
      const options = joinOptionsSchema.safeParse({ role: 'follower', pool: cli.pool, code: cli.code });
      if (!options.success) throw new CliError(`bad option: ${options.error.issues[0].path.join('.')}: ${options.error.issues[0].message}`);
      let agent: FollowerAgent;
      try {
        agent = await createAgent(cli.agent);
      } catch (error) {
        throw new CliError(`cannot start the agent ${JSON.stringify(cli.agent)}: ${(error as Error).message}`);
      }
      if (agent.needsRecording) {
        await agent.close?.();
        throw new CliError(`the ${agent.name} agent needs a recorded game; it can only be evaluated offline`);
      }
      let room: Room;
      try {
        room = await new Client(cli.server).joinOrCreate(ROOM_NAME, options.data);
      } catch (error) {
        await agent.close?.();
        throw new CliError(`cannot join a game on ${cli.server}: ${(error as Error).message}`);
      }
      const say = (line: string) => process.stdout.write(`${line}\n`);
      say(`joined ${room.roomId} as the follower, played by ${agent.name}; waiting for the leader`);
      try {
        await play(room, agent, say);
      } finally {
        await agent.close?.();
      }
    });
}

/** Acts on every follower turn until the game ends; resolves with the final score. */
function play(room: Room, agent: FollowerAgent, say: (line: string) => void): Promise<void> {
  let view: ClientView | null = null;
  let actedOn: ClientView | null = null;
  let busy = false;
  /** The agent's reset, begun at the first view: it must be over before the agent acts (a program answers in order). */
  let started: Promise<void> | null = null;
  const plans = new PlanPlayer<AgentAction>();
  return new Promise((resolve, reject) => {
    const fail = (error: Error) => {
      say(`agent failed: ${error.message}`);
      void room.leave(true);
      reject(new CliError(`the agent failed: ${error.message}`));
    };
    const actIfMyTurn = async () => {
      if (busy || !started) return;
      busy = true;
      try {
        await started;
        // The latest view: more may have come while the agent was resetting.
        const acting = view;
        if (!acting || acting.phase !== 'playing' || acting === actedOn) return;
        if (acting.turn.role !== 'follower') return plans.turnEnded();
        const observation = observationFromView(acting);
        const choice = await plans.next(followerSituation(observation.instruction), () => agent.act(observation));
        actedOn = acting;
        // A pass: the turn runs out by the server's clock.
        if (choice !== null) room.send(ACTION_MESSAGE, actionOfCode(choice));
      } catch (error) {
        fail(error as Error);
      } finally {
        busy = false;
      }
    };
    room.onMessage('view', (message: ViewMessage) => {
      view = applyViewMessage(view, message);
      started ??= Promise.resolve(agent.reset({ episodeId: room.roomId })).then(() => say('the game started'));
      void actIfMyTurn();
    });
    room.onMessage('error', (error: { code: string; message: string }) => {
      say(`refused: ${error.code}: ${error.message}`);
      plans.refused();
      // Act again on the current view, after a pause: an agent that repeats a refused action
      // must not flood the server (its rate limit would close the connection).
      setTimeout(() => {
        actedOn = null;
        void actIfMyTurn();
      }, RETRY_AFTER_REFUSAL_MS);
    });
    room.onMessage('notice', (notice: { kind: string; score?: number; reason?: string }) => {
      if (notice.kind === 'gameOver') {
        say(`game over (${notice.reason}), score ${notice.score}`);
        void room.leave(true);
        resolve();
      }
    });
    room.onMessage('*', () => {});
    room.onLeave((code) => (code >= 4000 ? reject(new CliError(`the server closed the game (code ${code})`)) : resolve()));
  });
}
