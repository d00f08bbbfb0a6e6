/**
 * Worked examples for the LLM follower (few-shot-k): K instructions from logged games between
 * people, each with the follower's view when it began the instruction (the text observation the
 * LLM follower itself gets, built as the evaluation builds an episode's first observation: a fresh
 * tracker at the state before the follower's first step for it) and the actions the human follower
 * took for it, DONE included. Only instructions the follower marked DONE are drawn: the
 * evaluation's examples (shared/eval/recording.ts).
 *
 * The draw is made once, when the agent starts, and every call of the run carries the same
 * examples: the same logs, K and seed give the same examples in every run, the records name them
 * once (the header), and the prompt's start stays the same from call to call (which a provider's
 * prompt cache rewards). The pool is ordered by game id and instruction id before the seeded
 * shuffle, so the order the logs are given in does not matter. A game whose id (its log header's
 * `gameId`) is among the games being evaluated is never in the pool.
 *
 * Segmenting a log into instructions is the evaluation's (shared/eval, a layer above the agents):
 * the host that starts the agent hands its reader in (`FewShotSource`).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Draw, seedRng } from '../../../engine/rng';
import type { GameState } from '../../../engine/state';
import { parseLog } from '../../../log/replay';
import { describeObservation } from '../../language';
import { ObservationTracker } from '../../observation';
import type { AgentAction } from '../../types';
import type { LlmConfig } from './config';
import { isRecordFileName, type ExampleRef, type RecordHeader } from './records';
import { TEMPLATE_VARIABLES, usesVariable, type LlmRole, type PromptTemplate } from './templates';

/** What the examples need of a logged game, as the evaluation segments it (shared/eval's Recording). */
export interface LoggedGame {
  readonly header: { readonly gameId: string };
  readonly states: readonly GameState[];
  /** The instructions the follower marked DONE, each with the index in `states` of the state before its first step for it. */
  readonly instructions: readonly { readonly id: number; readonly text: string; readonly start: number; readonly actions: readonly AgentAction[] }[];
}

/** What the host gives the agent to draw examples with. */
export interface FewShotSource {
  /** A log's text as a segmented game (shared/eval's loadRecording); throws when the log does not replay. */
  readonly readGame: (text: string) => LoggedGame;
  /** The ids of the games being evaluated: never examples. */
  readonly excludeGames?: readonly string[];
}

/** The examples of a run, as the agent uses them. */
export interface FewShot {
  /** The `examples` template variable: empty without examples, so that the prompt is what it was without the feature. */
  readonly text: string;
  /** What the records' header settings add (nothing without examples). */
  readonly settings: Pick<RecordHeader['settings'], 'fewShotLogs' | 'fewShotK' | 'fewShotSeed'>;
  /** The examples, in the prompt's order (absent without examples). */
  readonly examples?: readonly ExampleRef[];
}

export const NO_FEW_SHOT: FewShot = { text: '', settings: {} };

/** The examples cannot be drawn: the line says which setting and why. */
export class FewShotError extends Error {
  override name = 'FewShotError';
}

type FewShotSettings = Pick<LlmConfig, 'fewShotLogs' | 'fewShotK' | 'fewShotSeed'>;

/** Draws made in this process, by their inputs: the server starts an agent for every game. */
const drawn = new Map<string, FewShot>();

/**
 * The examples for a seat: none when K is 0, and none for a role whose templates take no
 * `{{examples}}` (the leader: `notice` says so once it was asked for some); else the run's draw,
 * which a template without `{{examples}}` would not send (refused: the records would name
 * examples the model never saw).
 */
export function fewShotFor(
  role: LlmRole,
  template: PromptTemplate,
  config: FewShotSettings,
  source: FewShotSource | undefined,
  notice: (line: string) => void,
): FewShot {
  if (config.fewShotK === 0) return NO_FEW_SHOT;
  if (!TEMPLATE_VARIABLES[role].includes('examples')) {
    notice(`few-shot-k: the llm ${role} takes no worked examples (they are a follower's); its prompt is unchanged`);
    return NO_FEW_SHOT;
  }
  if (!usesVariable(template, 'examples')) throw new FewShotError(`few-shot-k ${config.fewShotK}: the prompt template ${template.path} has no {{examples}}, so the examples would not be sent`);
  if (!config.fewShotLogs) throw new FewShotError(`few-shot-k ${config.fewShotK} needs few-shot-logs: the logged games the examples are drawn from`);
  if (!source) throw new FewShotError('few-shot-k: the examples cannot be drawn here (what starts this agent reads no logs)');
  const exclude = [...new Set(source.excludeGames ?? [])].sort();
  // The logs as given (the records name them so), and where relative paths start from.
  const key = JSON.stringify([process.cwd(), config.fewShotLogs, config.fewShotK, config.fewShotSeed, exclude]);
  let fewShot = drawn.get(key);
  if (!fewShot) {
    fewShot = drawFewShot(config.fewShotLogs, config.fewShotK, config.fewShotSeed, source.readGame, new Set(exclude));
    drawn.set(key, fewShot);
  }
  return fewShot;
}

/** An instruction of the pool: where to find it again once drawn. */
interface Candidate extends ExampleRef {
  readonly file: string;
  /** Its index among its game's instructions. */
  readonly index: number;
}

function drawFewShot(logs: readonly string[], k: number, seed: number, readGame: FewShotSource['readGame'], exclude: ReadonlySet<string>): FewShot {
  const read = (file: string): LoggedGame => {
    try {
      return readGame(readFileSync(file, 'utf8'));
    } catch (error) {
      throw new FewShotError(`few-shot-logs: ${file}: ${(error as Error).message}`);
    }
  };
  const pool = new Map<string, Candidate>();
  for (const file of logFiles(logs)) {
    const game = read(file);
    if (exclude.has(game.header.gameId)) continue;
    game.instructions.forEach((instruction, index) => {
      const candidate = { gameId: game.header.gameId, instructionId: instruction.id, file, index };
      // The same game given twice (a copy in another folder) is one game.
      const key = `${candidate.gameId}#${candidate.instructionId}`;
      if (!pool.has(key)) pool.set(key, candidate);
    });
  }
  const where = `few-shot-logs (${logs.join(', ')})`;
  const outside = exclude.size > 0 ? ' outside the games evaluated' : '';
  if (pool.size === 0) throw new FewShotError(`${where}: no instruction a follower marked DONE${outside}, so no example to draw`);
  if (pool.size < k) throw new FewShotError(`few-shot-k ${k}: ${where} hold only ${pool.size} instructions a follower marked DONE${outside}`);
  const ordered = [...pool.values()].sort((a, b) => (a.gameId < b.gameId ? -1 : a.gameId > b.gameId ? 1 : a.instructionId - b.instructionId));
  const chosen = new Draw(seedRng(seed)).shuffled(ordered).slice(0, k);
  const games = new Map([...new Set(chosen.map((candidate) => candidate.file))].map((file) => [file, read(file)]));
  const examples = chosen.map((candidate) => {
    const game = games.get(candidate.file)!;
    const instruction = game.instructions[candidate.index];
    return { instruction: instruction.text, view: describeObservation(new ObservationTracker().observe(game.states[instruction.start])), actions: instruction.actions };
  });
  return {
    text: examplesText(examples),
    settings: { fewShotLogs: logs, fewShotK: k, fewShotSeed: seed },
    examples: chosen.map(({ gameId, instructionId }) => ({ gameId, instructionId })),
  };
}

/**
 * The `examples` variable's text: a blank line first, so that the template can end its system
 * message with `{{examples}}` and send that message unchanged when there are none.
 */
export function examplesText(examples: readonly { readonly instruction: string; readonly view: string; readonly actions: readonly AgentAction[] }[]): string {
  const intro =
    'Worked examples: instructions from logged games between people. Each gives what the follower saw when it began the ' +
    'instruction, described as your view is, and the actions the human follower took for it. They are from other games than yours.';
  const worked = examples.map(
    (example, i) => `Example ${i + 1} of ${examples.length}: the instruction "${example.instruction}"\nWhat the follower saw:\n${example.view}\nThe human follower's actions: ${example.actions.join(', ')}`,
  );
  return ['', intro, ...worked].join('\n\n');
}

/** The `.jsonl` files among `paths` (files, or folders searched one level deep, call records left out), sorted. */
function logFiles(paths: readonly string[]): string[] {
  return paths.flatMap((path) => {
    let isFolder: boolean;
    try {
      isFolder = statSync(path).isDirectory();
    } catch {
      throw new FewShotError(`few-shot-logs: ${path}: no such file or folder`);
    }
    if (!isFolder) return [path];
    const files = readdirSync(path).filter((name) => name.endsWith('.jsonl') && !isRecordFileName(name)).sort();
    if (files.length === 0) throw new FewShotError(`few-shot-logs: ${path}: no .jsonl logs in the folder`);
    return files.map((name) => join(path, name));
  });
}

/** The game ids of logs (their headers'), for `FewShotSource.excludeGames`; a log that does not parse has none (it is not evaluated either). */
export function loggedGameIds(files: readonly string[]): string[] {
  return files.flatMap((file) => {
    try {
      return [parseLog(readFileSync(file, 'utf8')).header.gameId];
    } catch {
      return [];
    }
  });
}
