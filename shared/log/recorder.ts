/** Records a game as it is played: every accepted action becomes a log line at once. */
import type { GameConfig } from '../engine/config';
import type { GameMap } from '../engine/map';
import { startGame, type GameState, type InitialSetup } from '../engine/state';
import type { Action } from '../engine/actions';
import { step, type StepOptions, type StepResult } from '../engine/transition';
import { ENGINE_VERSION } from '../engine/version';
import { LOG_FORMAT, LOG_FORMAT_VERSION, eventLine, type AgentSeatFact, type EndReason, type LogEnd, type LogHeader, type LogLine } from './format';

export interface HeaderFields {
  readonly gameId: string;
  readonly startedAt: Date;
  readonly seed: number;
  readonly config: GameConfig;
  readonly map: GameMap;
  readonly setup: InitialSetup;
  readonly meta?: Record<string, unknown>;
  /** `recorded`: an imported game, whose replacement cards come from its own record (the header's field). */
  readonly replacementCards?: 'recorded';
}

export function makeHeader(fields: HeaderFields): LogHeader {
  return {
    kind: 'header',
    format: LOG_FORMAT,
    formatVersion: LOG_FORMAT_VERSION,
    engineVersion: ENGINE_VERSION,
    gameId: fields.gameId,
    startedAt: fields.startedAt.toISOString(),
    seed: fields.seed,
    config: fields.config,
    map: fields.map,
    initial: {
      leader: fields.setup.leader,
      follower: fields.setup.follower,
      cards: fields.setup.cards.map((card) => ({ ...card })),
      rng: [...fields.setup.rng],
    },
    meta: fields.meta ?? {},
    ...(fields.replacementCards ? { replacementCards: fields.replacementCards } : {}),
  };
}

/** The first state of the game a header describes. */
export function stateFromHeader(header: LogHeader): GameState {
  return startGame(header.config, header.map, header.initial);
}

/** One log line as text, without the newline. */
export function serializeLine(line: LogLine): string {
  return JSON.stringify(line);
}

/**
 * Plays a game through the engine and hands each log line to `write` as soon as the engine
 * accepts the action; refused actions are returned to the caller and never logged.
 */
export class GameRecorder {
  private seq = 0;
  private lastT = 0;
  private ended = false;
  state: GameState;

  constructor(
    readonly header: LogHeader,
    private readonly write: (line: LogLine) => void,
  ) {
    this.state = stateFromHeader(header);
    write(header);
  }

  /**
   * Applies an action at `t` ms since the start; times earlier than the last one are clamped. If
   * `write` throws, the action never happened: the state stays as it was.
   */
  apply(action: Action, t: number, options?: StepOptions): StepResult {
    if (this.ended) throw new Error('the log is closed');
    const result = step(this.state, action, options);
    if (result.ok) {
      const at = Math.max(this.lastT, Math.round(t));
      this.write(eventLine(this.seq + 1, at, action, result.outcome));
      this.state = result.state;
      this.lastT = at;
      this.seq += 1;
    }
    return result;
  }

  /** Writes what an agent's seat did at `t` ms since the start (clamped as an action's time); the game's state stays as it is. */
  agentSeat(fact: AgentSeatFact, t: number): void {
    if (this.ended) throw new Error('the log is closed');
    const at = Math.max(this.lastT, Math.round(t));
    this.write({ kind: 'agentSeat', t: at, ...fact });
    this.lastT = at;
  }

  /** Closes the log; a game that is over always ends with 'turns-exhausted'. */
  end(t: number, reason: EndReason): LogEnd {
    if (this.ended) throw new Error('the log is already closed');
    this.ended = true;
    const line: LogEnd = {
      kind: 'end',
      t: Math.max(this.lastT, Math.round(t)),
      reason: this.state.gameOver ? 'turns-exhausted' : reason,
      score: this.state.score,
    };
    this.write(line);
    return line;
  }

  get isEnded(): boolean {
    return this.ended;
  }

  /** Events logged so far: the next one's index. */
  get events(): number {
    return this.seq;
  }
}
