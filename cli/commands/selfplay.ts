/**
 * `cerealbar selfplay`: complete games headless, one log each. By default the scripted leader and
 * the scripted follower (self-play's pair, which knows which card each instruction means); with
 * `--leader A --follower B` any two agents, built in or programs, played by playAgentGame.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { agentNames } from '../../shared/agents/catalogue';
import { SeatStartError, startPair as startAgentPair, type AgentPair } from '../../shared/agents/node/registry';
import { DEFAULT_CONFIG } from '../../shared/engine/config';
import type { GameMap } from '../../shared/engine/map';
import type { Role } from '../../shared/engine/state';
import { serializeLine } from '../../shared/log/recorder';
import type { LogLine } from '../../shared/log/format';
import { generateMap } from '../../shared/maps/generate';
import { playAgentGame } from '../../shared/agents/agentGame';
import { playSelfPlayGame } from '../../shared/selfplay/game';
import { CliError } from '../errors';
import { addLlmOptions, addLlmRunOptions, checkLlmOptionsUsed, llmReport, llmSeatConfigs, llmStarter, runSpend, seatFiles, seatSpec, type LlmCliOptions, type SeatSpec } from '../llmOptions';
import { integerOption } from '../options';
import { endManifest, RUN_MANIFEST, startManifest, writeManifest } from '../runManifest';
import { writeFileAtomically } from '../durableFiles';
import { INTERRUPTED_EXIT, RunInterrupt } from '../interrupt';
import { removeRecords } from '../../shared/agents/node/llm/records';
import { closeSharedFrameRenderer } from '../../shared/agents/node/llm/images';
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
type Pair = AgentPair;

/** The seats as given: `llm@FILE` is the llm agent with its own config file (two models in one game). */
type Seats = Readonly<Record<Role, SeatSpec>>;

/** What decides the games, for run.json: the agents (who they said they are), the seeds, the map, each llm seat's settings (never a key). */
function runSettings(options: SelfPlayOptions, seats: Seats, pair: Pair | null): Record<string, unknown> {
  return {
    kind: 'selfplay',
    leader: options.leader,
    follower: options.follower,
    agents: pair?.agents ?? null,
    games: options.games,
    seed: options.seed,
    map: options.map ?? null,
    llm: llmSeatConfigs(options, seats),
  };
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
    .option('--leader <agent>', `the leader: a built-in agent (${agentNames('leader', 'game').join(', ')}) or a command that speaks the agent protocol`, 'scripted')
    .option(
      '--follower <agent>',
      `the follower: ${SCRIPTED_FOLLOWER} (self-play's own, with the scripted leader only), a built-in agent (${agentNames('follower', 'game').join(', ')}) or a command that speaks the agent protocol`,
      SCRIPTED_FOLLOWER,
    )
    .action(async (options: SelfPlayOptions) => {
      const seats: Seats = { leader: seatSpec(options.leader), follower: seatSpec(options.follower) };
      const fixedMap: GameMap | undefined = options.map ? readMapFile(options.map) : undefined;
      if (seats.follower.agent === SCRIPTED_FOLLOWER && seats.leader.agent !== 'scripted') {
        throw new CliError(`--follower ${SCRIPTED_FOLLOWER} plays only with --leader scripted (it is told which card each instruction means); try --follower heuristic`);
      }
      try {
        mkdirSync(options.out, { recursive: true });
      } catch (error) {
        throw new CliError(`${options.out}: cannot create the directory: ${(error as Error).message}`);
      }
      checkLlmOptionsUsed(options, { leader: [seats.leader.agent], follower: [seats.follower.agent] }, '--leader or --follower');
      const pair = seats.follower.agent === SCRIPTED_FOLLOWER ? null : await startPair(options, seats);
      const play: PlayGame = pair ? agentGame(pair) : scriptedGame;
      const manifest = startManifest(runSettings(options, seats, pair));
      writeManifest(join(options.out, RUN_MANIFEST), manifest);
      try {
        await playGames(options, fixedMap, play, pair);
        writeManifest(join(options.out, RUN_MANIFEST), endManifest(manifest, { games: options.games, seeds: [options.seed, options.seed + options.games - 1] }));
      } finally {
        await pair?.leader.close?.();
        await pair?.follower.close?.();
        await closeSharedFrameRenderer();
      }
    });
  addLlmRunOptions(addLlmOptions(command));
}

async function playGames(options: SelfPlayOptions, fixedMap: GameMap | undefined, play: PlayGame, pair: Pair | null): Promise<void> {
  const started = performance.now();
  let totalScore = 0;
  const refused: Record<Role, number> = { leader: 0, follower: 0 };
  // Ctrl-C: the game under way ends and its log is written; a second Ctrl-C discards its call records instead.
  let playing: number | null = null;
  const recordDir = options.llmRecords ?? options.out;
  const interrupt = new RunInterrupt(() => {
    if (playing !== null) for (const role of ['leader', 'follower'] as const) removeRecords(recordDir, `selfplay-${playing}`, role);
  }, `The logs of the games finished are in ${options.out}.`);
  const stopListening = interrupt.listen();
  try {
    for (let i = 0; i < options.games && !interrupt.requested; i++) {
      const seed = (playing = options.seed + i);
      await playOne(seed);
    }
  } finally {
    stopListening();
  }
  if (interrupt.requested) throw new CliError(`interrupted: the logs of the games finished are in ${options.out}, whole`, INTERRUPTED_EXIT);

  async function playOne(seed: number): Promise<void> {
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
    writeFileAtomically(join(options.out, `selfplay-${seed}.jsonl`), lines.map((line) => `${serializeLine(line)}\n`).join(''));
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
async function startPair(options: SelfPlayOptions, seats: Seats): Promise<Pair> {
  const context = { setting: 'game', startLlm: llmStarter(options, options.out, { spend: runSpend(options), files: seatFiles(seats) }) } as const;
  try {
    return await startAgentPair({ leader: seats.leader.agent, follower: seats.follower.agent }, context);
  } catch (error) {
    if (!(error instanceof SeatStartError)) throw error;
    throw new CliError(`cannot start the ${error.role} ${JSON.stringify(error.spec)}: ${(error.cause as Error).message}`);
  }
}
