/**
 * Reading logs back: parse checks every line's shape, replay re-simulates the events through the
 * engine and checks every recorded outcome (an agent seat's lines are no action: they are kept
 * for their readers and passed over). Problems are LogErrors naming the line (1-based).
 */
import type { z } from 'zod';
import { GameSetupError } from '../engine/errors';
import type { GameState } from '../engine/state';
import { step } from '../engine/transition';
import { ENGINE_VERSION } from '../engine/version';
import { agentSeatSchema, endSchema, eventAction, eventSchema, headerSchema, type LogAgentSeat, type LogEnd, type LogEvent, type LogHeader } from './format';
import { stateFromHeader } from './recorder';

export class LogError extends Error {
  override name = 'LogError';
  constructor(
    /** 1-based line number, or 0 for the file as a whole. */
    readonly line: number,
    readonly detail: string,
  ) {
    super(line > 0 ? `line ${line}: ${detail}` : detail);
  }
}

export interface ParsedLog {
  readonly header: LogHeader;
  /** Events with the line each came from. */
  readonly events: readonly { readonly line: number; readonly event: LogEvent }[];
  /** What the server's agent seats did about their agents (P-147), in order. */
  readonly agentSeats: readonly LogAgentSeat[];
  /** Null when the log stops without an end line. */
  readonly end: { readonly line: number; readonly end: LogEnd } | null;
}

function describeIssues(error: z.ZodError): string {
  const issue = error.issues[0];
  const where = issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
  const more = error.issues.length > 1 ? ` (and ${error.issues.length - 1} more problems)` : '';
  return `${where}${issue.message}${more}`;
}

function parseJson(text: string, line: number, isLast: boolean): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const why = isLast ? 'the last line is cut off or not JSON' : 'not JSON';
    throw new LogError(line, `${why} (${(error as Error).message})`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new LogError(line, 'a log line must be a JSON object');
  return value as Record<string, unknown>;
}

/** Splits a log into checked lines. Allows at most one missing end line, reported as `end: null`. */
export function parseLog(text: string): ParsedLog {
  const lines = text.split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  if (lines.length === 0) throw new LogError(0, 'the log is empty');

  const first = parseJson(lines[0], 1, lines.length === 1);
  if (first.kind !== 'header') throw new LogError(1, `the first line must be the header, found kind ${JSON.stringify(first.kind)}`);
  const header = headerSchema.safeParse(first);
  if (!header.success) throw new LogError(1, `bad header: ${describeIssues(header.error)}`);

  const events: { line: number; event: LogEvent }[] = [];
  const agentSeats: LogAgentSeat[] = [];
  let end: ParsedLog['end'] = null;
  /** The last event's time: no later line may be before it. */
  const lastEventT = () => events.at(-1)?.event.t ?? 0;
  const notBeforeLastEvent = (t: number, lineNo: number) => {
    if (t < lastEventT()) throw new LogError(lineNo, `time goes backwards: ${t} ms after ${lastEventT()} ms`);
  };
  for (let i = 1; i < lines.length; i++) {
    const lineNo = i + 1;
    if (end) throw new LogError(lineNo, `content after the end line (line ${end.line})`);
    if (lines[i].trim() === '') throw new LogError(lineNo, 'empty line');
    const value = parseJson(lines[i], lineNo, i === lines.length - 1);
    if (value.kind === 'event') {
      const parsed = eventSchema.safeParse(value);
      if (!parsed.success) throw new LogError(lineNo, `bad event: ${describeIssues(parsed.error)}`);
      const expectedSeq = events.length + 1;
      if (parsed.data.seq !== expectedSeq) throw new LogError(lineNo, `event seq is ${parsed.data.seq}, expected ${expectedSeq}`);
      notBeforeLastEvent(parsed.data.t, lineNo);
      events.push({ line: lineNo, event: parsed.data });
    } else if (value.kind === 'agentSeat') {
      const parsed = agentSeatSchema.safeParse(value);
      if (!parsed.success) throw new LogError(lineNo, `bad agent seat line: ${describeIssues(parsed.error)}`);
      notBeforeLastEvent(parsed.data.t, lineNo);
      agentSeats.push(parsed.data);
    } else if (value.kind === 'end') {
      const parsed = endSchema.safeParse(value);
      if (!parsed.success) throw new LogError(lineNo, `bad end line: ${describeIssues(parsed.error)}`);
      if (parsed.data.t < lastEventT()) throw new LogError(lineNo, `the end time ${parsed.data.t} ms is before the last event (${lastEventT()} ms)`);
      end = { line: lineNo, end: parsed.data };
    } else if (value.kind === 'header') {
      throw new LogError(lineNo, 'a second header');
    } else {
      throw new LogError(lineNo, `unknown line kind ${JSON.stringify(value.kind)}`);
    }
  }
  return { header: header.data, events, agentSeats, end };
}

interface Difference {
  /** Keys from the outside in (built on the way out, so equal values cost no strings). */
  readonly path: string[];
  readonly recorded: unknown;
  readonly replayed: unknown;
}

function findDifference(recorded: unknown, replayed: unknown): Difference | null {
  if (Object.is(recorded, replayed)) return null;
  const bothObjects = typeof recorded === 'object' && typeof replayed === 'object' && recorded !== null && replayed !== null;
  if (!bothObjects || Array.isArray(recorded) !== Array.isArray(replayed)) return { path: [], recorded, replayed };
  const a = recorded as Record<string, unknown>;
  const b = replayed as Record<string, unknown>;
  for (const key in a) {
    const difference = findDifference(a[key], b[key]);
    if (difference) return (difference.path.unshift(key), difference);
  }
  for (const key in b) {
    if (key in a) continue;
    const difference = findDifference(undefined, b[key]);
    if (difference) return (difference.path.unshift(key), difference);
  }
  return null;
}

/** The first place two JSON values differ, as "path: recorded X, replay gives Y", or null. */
export function firstDifference(recorded: unknown, replayed: unknown, path = 'outcome'): string | null {
  const difference = findDifference(recorded, replayed);
  if (!difference) return null;
  const show = (value: unknown) => (value === undefined ? 'nothing' : JSON.stringify(value));
  return `${[path, ...difference.path].join('.')}: recorded ${show(difference.recorded)}, replay gives ${show(difference.replayed)}`;
}

export interface ReplayOptions {
  /** Called with the state before the first event (event null) and after every event. */
  readonly onState?: (state: GameState, event: LogEvent | null) => void;
  /** Accept a log without an end line (a game still being written); replay() otherwise refuses it. */
  readonly allowOpen?: boolean;
}

export interface ReplayResult {
  readonly header: LogHeader;
  readonly final: GameState;
  readonly events: number;
  readonly end: LogEnd | null;
  /** The log's agent seat lines, as parseLog read them. */
  readonly agentSeats: readonly LogAgentSeat[];
  /** The log came from another engine version, so the recorded replacement cards were used. */
  readonly usedRecordedCards: boolean;
}

/**
 * Re-simulates a log through the engine and checks every recorded outcome. Logs of this engine
 * version must match the engine's own random draws; logs of other versions supply them.
 */
export function replay(text: string, options: ReplayOptions = {}): ReplayResult {
  const log = parseLog(text);
  let state: GameState;
  try {
    state = stateFromHeader(log.header);
  } catch (error) {
    if (error instanceof GameSetupError) throw new LogError(1, `the header cannot start a game: ${error.message}`);
    throw error;
  }
  const usedRecordedCards = log.header.engineVersion !== ENGINE_VERSION || log.header.replacementCards === 'recorded';
  options.onState?.(state, null);
  for (const { line, event } of log.events) {
    const result = step(state, eventAction(event), {
      replacementCards: usedRecordedCards ? event.outcome.set?.added : undefined,
    });
    if (!result.ok) throw new LogError(line, `the engine refuses this ${event.type} by the ${event.actor}: ${result.error.code}: ${result.error.message}`);
    const difference = firstDifference(event.outcome, result.outcome);
    if (difference) throw new LogError(line, `outcome differs from the rules: ${difference}`);
    state = result.state;
    options.onState?.(state, event);
  }
  const lastLine = log.events.length > 0 ? log.events[log.events.length - 1].line : 1;
  if (!log.end) {
    if (!options.allowOpen) throw new LogError(lastLine, 'the log stops here without an end line (truncated, or the game was never closed)');
  } else {
    const { end, line } = log.end;
    if (end.score !== state.score) throw new LogError(line, `end line says score ${end.score}, replay gives ${state.score}`);
    if (state.gameOver && end.reason !== 'turns-exhausted') {
      throw new LogError(line, `the turns ran out but the end line says ${JSON.stringify(end.reason)}`);
    }
    if (!state.gameOver && end.reason === 'turns-exhausted') {
      throw new LogError(line, `the end line says the turns ran out, but ${state.turnsLeft} turns are left`);
    }
  }
  return { header: log.header, final: state, events: log.events.length, end: log.end?.end ?? null, agentSeats: log.agentSeats, usedRecordedCards };
}
