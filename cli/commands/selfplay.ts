/**
 * `cerealbar selfplay`: complete games headless, one log each. By default the scripted leader and
 * the scripted follower (self-play's pair, which knows which card each instruction means); with
 * `--leader A --follower B` any two agents, built in or programs, played by playAgentGame.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { AGENT_NAMES_BY_ROLE, createAgent, createLeaderAgent } from '../../shared/agents/node/registry';
import type { AgentIdentity, FollowerAgent, LeaderAgent } from '../../shared/agents/types';
import { DEFAULT_CONFIG } from '../../shared/engine/config';
import type { GameMap } from '../../shared/engine/map';
import type { Role } from '../../shared/engine/state';
import { serializeLine } from '../../shared/log/recorder';
import type { LogLine } from '../../shared/log/format';
import { generateMap } from '../../shared/maps/generate';
import { playAgentGame } from '../../shared/agents/agentGame';
import { playSelfPlayGame } from '../../shared/selfplay/game';
import { CliError } from '../errors';
import { addLlmOptions, checkLlmOptionsUsed, LLM_AGENT_SPEC, llmReport, seatIdentity, startSeatAgent, type LlmCliOptions } from '../llmOptions';
import { integerOption } from '../options';
import { readMapFile } from './maps';

interface SelfPlayOptions extends LlmCliOptions {
  games: number;
  seed: number;
  out: string;
  map?: string;
  leader: string;
  follower: string;
}

/** Self-play's own follower: it plays only with the scripted leader, which tells it each instruction's card. */
export const SCRIPTED_FOLLOWER = 'scripted';

/** The agents of an agent pair, started once for all the games. */
interface Pair {
  readonly leader: LeaderAgent;
  readonly follower: FollowerAgent;
  readonly agents: { readonly leader: AgentIdentity; readonly follower: AgentIdentity };
}

/** One game: its final score and, for agent pairs, the actions refused by seat. */
type PlayGame = (seed: number, map: GameMap, write: (line: LogLine) => void) => Promise<{ score: number; refused?: Record<Role, number> }>;

export function registerSelfPlayCommand(program: Command): void {
  const command = program
    .command('selfplay')
    .description('play complete games headless between a leader and a follower (the scripted pair by default); one log per game')
    .requiredOption('--out <dir>', 'directory for the logs (created if missing)')
    .option('--games <n>', 'number of games', integerOption('--games', 1, 1_000_000), 1)
    .option('--seed <s>', 'seed of the first game; game i uses seed + i', integerOption('--seed', 0, 2 ** 31 - 1), 1)
    .option('--map <file>', 'play every game on this map file instead of a generated map')
    .option('--leader <agent>', `the leader: a built-in agent (${[...AGENT_NAMES_BY_ROLE.leader, LLM_AGENT_SPEC].join(', ')}) or a command that speaks the agent protocol`, 'scripted')
    .option(
      '--follower <agent>',
      `the follower: ${SCRIPTED_FOLLOWER} (self-play's own, with the scripted leader only), a built-in agent (${[...AGENT_NAMES_BY_ROLE.follower, LLM_AGENT_SPEC].join(', ')}) or a command that speaks the agent protocol`,
      SCRIPTED_FOLLOWER,
    )
    .action(async (options: SelfPlayOptions) => {
      const fixedMap: GameMap | undefined = options.map ? readMapFile(options.map) : undefined;
      if (options.follower === SCRIPTED_FOLLOWER && options.leader !== 'scripted') {
        throw new CliError(`--follower ${SCRIPTED_FOLLOWER} plays only with --leader scripted (it is told which card each instruction means); try --follower heuristic`);
      }
      try {
        mkdirSync(options.out, { recursive: true });
      } catch (error) {
        throw new CliError(`${options.out}: cannot create the directory: ${(error as Error).message}`);
      }
      checkLlmOptionsUsed(options, [options.leader, options.follower], '--leader or --follower');
      const pair = options.follower === SCRIPTED_FOLLOWER ? null : await startPair(options);
      const play: PlayGame = pair ? agentGame(pair) : scriptedGame;
      try {
        await playGames(options, fixedMap, play, pair);
      } finally {
        await pair?.leader.close?.();
        await pair?.follower.close?.();
      }
    });
  addLlmOptions(command);
}

async function playGames(options: SelfPlayOptions, fixedMap: GameMap | undefined, play: PlayGame, pair: Pair | null): Promise<void> {
  const started = performance.now();
  let totalScore = 0;
  const refused: Record<Role, number> = { leader: 0, follower: 0 };
  for (let i = 0; i < options.games; i++) {
    const seed = options.seed + i;
    const lines: LogLine[] = [];
    let result: Awaited<ReturnType<PlayGame>>;
    try {
      result = await play(seed, fixedMap ?? generateMap(seed), (line) => lines.push(line));
    } catch (error) {
      throw new CliError(`game ${seed}: ${(error as Error).message}`, 1);
    }
    totalScore += result.score;
    refused.leader += result.refused?.leader ?? 0;
    refused.follower += result.refused?.follower ?? 0;
    writeFileSync(join(options.out, `selfplay-${seed}.jsonl`), lines.map((line) => `${serializeLine(line)}\n`).join(''));
  }
  const seconds = (performance.now() - started) / 1000;
  const agents = pair
    ? `leader ${pair.agents.leader.name}, follower ${pair.agents.follower.name}; actions refused: leader ${refused.leader}, follower ${refused.follower}\n`
    : '';
  process.stdout.write(
    `${options.games} games written to ${options.out} in ${seconds.toFixed(2)} s; mean score ${(totalScore / options.games).toFixed(2)}\n` +
      agents +
      (pair ? llmReport(pair) : '') +
      `check them with: npx cerealbar replay ${join(options.out, '*.jsonl')}\n`,
  );
}

const scriptedGame: PlayGame = async (seed, map, write) => {
  const { state } = playSelfPlayGame({ seed, map, config: DEFAULT_CONFIG, gameId: `selfplay-${seed}` }, write);
  return { score: state.score };
};

function agentGame(pair: Pair): PlayGame {
  return async (seed, map, write) => {
    const { state, refused } = await playAgentGame({ seed, map, config: DEFAULT_CONFIG, gameId: `selfplay-${seed}`, ...pair }, write);
    return { score: state.score, refused };
  };
}

/** Starts both agents (a program's handshake included); one that cannot start stops the command before any game. */
async function startPair(options: SelfPlayOptions): Promise<Pair> {
  const { leader: leaderSpec, follower: followerSpec, out } = options;
  const leader = await starting('leader', leaderSpec, startSeatAgent('leader', leaderSpec, options, out, createLeaderAgent));
  let follower: FollowerAgent;
  try {
    follower = await starting('follower', followerSpec, startSeatAgent('follower', followerSpec, options, out, (spec) => createAgent(spec)));
  } catch (error) {
    await leader.close?.();
    throw error;
  }
  if (follower.needsRecording) {
    await Promise.all([leader.close?.(), follower.close?.()]);
    throw new CliError(`the ${follower.name} agent needs a recorded game; it can only be evaluated offline (cerealbar eval)`);
  }
  return { leader, follower, agents: { leader: seatIdentity(leader, leaderSpec), follower: seatIdentity(follower, followerSpec) } };
}

async function starting<A>(role: Role, spec: string, agent: Promise<A>): Promise<A> {
  try {
    return await agent;
  } catch (error) {
    throw new CliError(`cannot start the ${role} ${JSON.stringify(spec)}: ${(error as Error).message}`);
  }
}
