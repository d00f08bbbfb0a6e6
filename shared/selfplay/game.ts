/**
 * Headless self-play: the scripted leader and follower play a whole game through the recorder, so
 * every action is checked by the engine and logged. Everything, the players' habits and the
 * simulated clock included, follows from the seed, so a seed always gives the same log.
 */
import { DEFAULT_CONFIG, type GameConfig } from '../engine/config';
import type { GameMap } from '../engine/map';
import { Draw, seedRng } from '../engine/rng';
import { drawSetup, type GameState, type Role } from '../engine/state';
import type { Action } from '../engine/actions';
import type { LogHeader, LogLine } from '../log/format';
import { GameRecorder, makeHeader } from '../log/recorder';
import { ScriptedFollower } from './follower';
import { ScriptedLeader, type CardTask, type Decision } from './leader';
import { PathPlanner } from '../nav/pathing';

export interface SelfPlayOptions {
  readonly seed: number;
  readonly map: GameMap;
  readonly config?: GameConfig;
  readonly gameId?: string;
  /** Defaults to the Unix epoch, so that the header too depends only on the options. */
  readonly startedAt?: Date;
  readonly meta?: Record<string, unknown>;
}

export interface SelfPlayResult {
  readonly state: GameState;
  readonly header: LogHeader;
  /** Actions the engine accepted. */
  readonly actions: number;
}

/** A game that takes longer than this is a script stuck in a loop. */
export const MAX_ACTIONS = 20_000;

/** When the server declares a turn timed out, in ms from the turn's start. */
export const TURN_TIME_LIMIT_MS: Readonly<Record<Role, number>> = { leader: 45_000, follower: 15_000 };

/** How long the simulated players take per action, in ms: [shortest, longest]. A timeout comes at the limit. */
const ACTION_MS: Readonly<Record<Role, Partial<Record<Action['type'], readonly [number, number]>>>> = {
  leader: { move: [800, 3_000], instruction: [4_000, 10_000], endTurn: [500, 2_000] },
  follower: { move: [400, 1_200], done: [300, 1_500] },
};

/** The scripted players' own generator for a game: the seed mixed so that their draws are independent of the game's. */
export function scriptedPlayersDraw(seed: number): Draw {
  return new Draw(seedRng(seed ^ 0x5eed));
}

interface ScriptedPlayer {
  startTurn(state: GameState): void;
  decide(state: GameState): Decision;
}

export function playSelfPlayGame(options: SelfPlayOptions, write: (line: LogLine) => void): SelfPlayResult {
  const config = options.config ?? DEFAULT_CONFIG;
  const header = makeHeader({
    gameId: options.gameId ?? `selfplay-${options.seed}`,
    startedAt: options.startedAt ?? new Date(0),
    seed: options.seed,
    config,
    map: options.map,
    setup: drawSetup(config, options.map, options.seed),
    meta: { source: 'selfplay', ...options.meta },
  });
  const recorder = new GameRecorder(header, write);
  const draw = scriptedPlayersDraw(options.seed);
  // The leader's plan: which card each instruction is about. The engine keeps only the text.
  const tasks = new Map<number, CardTask>();
  const paths = new PathPlanner(recorder.state.world);
  const players: Record<Role, ScriptedPlayer> = {
    leader: new ScriptedLeader(paths, draw, tasks),
    follower: new ScriptedFollower(paths, draw, tasks),
  };

  let t = 0;
  let turnStart = 0;
  let actions = 0;
  players.leader.startTurn(recorder.state);
  while (!recorder.state.gameOver) {
    if (actions >= MAX_ACTIONS) throw new Error(`self-play game ${options.seed} did not end within ${MAX_ACTIONS} actions`);
    const role = recorder.state.turn.role;
    const decision = players[role].decide(recorder.state);
    const { action, at } = timed(decision.action, role, t, turnStart, draw);
    const result = recorder.apply(action, at);
    if (!result.ok) {
      throw new Error(`the engine refused the scripted ${JSON.stringify(action)}: ${result.error.code} (${result.error.message})`);
    }
    actions++;
    t = at;
    if (action === decision.action && decision.task && result.outcome.instruction !== undefined) {
      tasks.set(result.outcome.instruction, decision.task);
    }
    if (result.outcome.turnEnded && !result.state.gameOver) {
      turnStart = t;
      players[result.state.turn.role].startTurn(result.state);
    }
  }
  recorder.end(t, 'turns-exhausted');
  return { state: recorder.state, header, actions };
}

/**
 * When the action happens on the simulated clock. A player that would still be busy when its
 * time is up gets the server's timeout instead, exactly at the limit, as on a real server.
 */
export function timed(action: Action, role: Role, t: number, turnStart: number, draw: Draw): { action: Action; at: number } {
  const deadline = turnStart + TURN_TIME_LIMIT_MS[role];
  const range = ACTION_MS[role][action.type];
  const at = range ? t + draw.int(range[0], range[1]) : deadline;
  if (at >= deadline) return { action: { type: 'timeout', actor: 'server', role }, at: deadline };
  return { action, at };
}
