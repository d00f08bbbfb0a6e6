/**
 * `cerealbar agent --role leader|follower --server URL --agent AGENT`: an agent joins a live game
 * in either seat. It sees what a human in its seat sees (the seat's `view` messages, as the
 * role's observation), its plans are played one action at a time, and an action the server
 * refuses drops the rest of the plan: the agent is asked again on the current view. A follower
 * hears the leader's live feedback from the server's notices, as a person's client does.
 */
import { Client, type Room } from '@colyseus/sdk';
import type { Command } from 'commander';
import WebSocket from 'ws';
import { agentNames } from '../../shared/agents/catalogue';
import { startAgent as startSeatAgent, type StartedAgent as SeatAgent } from '../../shared/agents/node/registry';
import { closeSharedFrameRenderer } from '../../shared/agents/node/llm/images';
import { seatAdapterFor } from '../../shared/agents/seatAdapter';
import { ROLES, type Role } from '../../shared/engine/state';
import { ACTION_MESSAGE, applyViewMessage, joinOptionsSchema, noticeSchema, ROOM_NAME, type ClientView, type ViewMessage } from '../../shared/protocol/messages';
import { CliError, oneLineReason } from '../errors';
import { addLlmOptions, checkLlmOptionsUsed, llmReport, llmStarter, type LlmCliOptions } from '../llmOptions';

// Node 20 has no global WebSocket; the SDK's reconnection looks for one.
(globalThis as { WebSocket?: unknown }).WebSocket ??= WebSocket;

/** Pause before asking the agent again after the server (or the agent's own vocabulary) refused its action. */
const RETRY_AFTER_REFUSAL_MS = 100;

interface AgentCliOptions extends LlmCliOptions {
  server: string;
  agent: string;
  role: Role;
  pool?: string;
  code?: string;
  botPartner?: boolean;
}

const partnerOf = (role: Role): Role => (role === 'leader' ? 'follower' : 'leader');

export function registerAgentCommand(program: Command): void {
  const command = program
    .command('agent')
    .description('join a live game on a server as the leader or the follower, played by an agent')
    .requiredOption('--server <url>', 'the game server, e.g. http://localhost:2567')
    .requiredOption(
      '--agent <agent>',
      `a built-in agent (followers: ${agentNames('follower', 'live').join(', ')}; leaders: ${agentNames('leader', 'live').join(', ')}) or a command that speaks the agent protocol`,
    )
    .option('--role <role>', `the seat to play: ${ROLES.join(' or ')}`, roleOption, 'follower')
    .option('--pool <pool>', 'the player pool to join')
    .option('--code <code>', 'the private game to join')
    .option('--bot-partner', "play with the server's own agent in the other seat (serve --bot-leader, --bot-follower) instead of waiting for a person")
    .action(async (cli: AgentCliOptions) => {
      const partner = cli.botPartner ? { [cli.role === 'leader' ? 'botFollower' : 'botLeader']: true } : {};
      const options = joinOptionsSchema.safeParse({ role: cli.role, pool: cli.pool, code: cli.code, ...partner });
      if (!options.success) throw new CliError(`bad option: ${options.error.issues[0].path.join('.')}: ${options.error.issues[0].message}`);
      checkLlmOptionsUsed(cli, { [cli.role]: [cli.agent] }, '--agent');
      const seated = await startAgent(cli.agent, cli.role, cli);
      try {
        let room: Room;
        try {
          room = await new Client(cli.server).joinOrCreate(ROOM_NAME, options.data);
        } catch (error) {
          throw new CliError(`cannot join a game on ${cli.server}: ${(error as Error).message}`);
        }
        const say = (line: string) => process.stdout.write(`${line}\n`);
        say(`joined ${room.roomId} as the ${cli.role}, played by ${seated.agent.name}; waiting for the ${partnerOf(cli.role)}`);
        try {
          await play(room, seated, say);
        } finally {
          process.stdout.write(llmReport({ [seated.role]: seated.agent }));
        }
      } finally {
        await seated.agent.close?.();
        await closeSharedFrameRenderer();
      }
    });
  addLlmOptions(command);
}

function roleOption(value: string): Role {
  if (!(ROLES as readonly string[]).includes(value)) throw new CliError(`--role: ${JSON.stringify(value)} is not a seat; use ${ROLES.join(' or ')}`);
  return value as Role;
}

/** The agent for the seat, ready to play live: one that needs a recorded game or the whole state cannot. */
async function startAgent(spec: string, role: Role, cli: AgentCliOptions): Promise<SeatAgent> {
  try {
    // Its call records go to --llm-records, else the current directory.
    return await startSeatAgent(spec, role, { setting: 'live', startLlm: llmStarter(cli, '.') });
  } catch (error) {
    throw new CliError(`cannot start the ${role} agent ${JSON.stringify(spec)}: ${oneLineReason(error)}`);
  }
}

/** Acts on every turn of its seat until the game ends. */
function play(room: Room, seated: SeatAgent, say: (line: string) => void): Promise<void> {
  const seat = seatAdapterFor(seated);
  let view: ClientView | null = null;
  let actedOn: ClientView | null = null;
  let busy = false;
  /** The agent's reset, begun at the first view: it must be over before the agent acts (a program answers in order). */
  let started: Promise<void> | null = null;
  return new Promise((resolve, reject) => {
    const fail = (error: Error) => {
      say(`agent failed: ${error.message}`);
      void room.leave(true);
      reject(new CliError(`the agent failed: ${oneLineReason(error)}`));
    };
    /** The action was not played: the rest of the plan goes, and the agent is asked again on the current view after a pause. */
    const refused = () => {
      seat.refused();
      // An agent that repeats a refused action must not flood the server (its rate limit would close the connection).
      setTimeout(() => {
        actedOn = null;
        void actIfMyTurn();
      }, RETRY_AFTER_REFUSAL_MS);
    };
    const actIfMyTurn = async () => {
      if (busy || !started) return;
      busy = true;
      try {
        await started;
        // The latest view: more may have come while the agent was resetting or thinking.
        const acting = view;
        if (!acting || acting.phase !== 'playing' || acting === actedOn || acting.turn.role !== seat.role) return;
        const move = await seat.next(acting);
        actedOn = acting;
        // A pass: the turn runs out by the server's clock.
        if (move.kind === 'pass') return;
        if (move.kind === 'refused') {
          say(`not played: ${move.reason}`);
          return refused();
        }
        room.send(ACTION_MESSAGE, move.action);
      } catch (error) {
        fail(error as Error);
      } finally {
        busy = false;
      }
    };
    room.onMessage('view', (message: ViewMessage) => {
      view = applyViewMessage(view, message);
      // The seat's turn is over: its plan goes, and a follower forgets the leader's feedback of that turn.
      if (view.turn.role !== seat.role) seat.turnEnded();
      started ??= Promise.resolve(seated.agent.reset({ episodeId: room.roomId })).then(() => say('the game started'));
      void actIfMyTurn();
    });
    room.onMessage('error', (error: { code: string; message: string }) => {
      say(`refused: ${error.code}: ${error.message}`);
      refused();
    });
    room.onMessage('notice', (message: unknown) => {
      // A notice this version does not know (or a malformed one) tells the agent nothing.
      const parsed = noticeSchema.safeParse(message);
      if (!parsed.success) return;
      const notice = parsed.data;
      seat.hear(notice);
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
