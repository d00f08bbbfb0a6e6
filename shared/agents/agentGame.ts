/**
 * One whole game between any leader agent and any follower agent, headless, through the recorder:
 * every action is checked as the game server checks it (checkPlayerAction) and logged, and the
 * log replays with `replay()`. Each agent sees what a human in its seat would: its seat's view,
 * the seat's memory witnessing every moment of the game as a live player's screen does, through
 * the adapter every host plays a seat with (seatAdapter.ts).
 *
 * Answers are played as plans (shared/agents/plans.ts). Time is simulated, as in self-play: each
 * action takes a seeded time of its kind, and a turn whose time is up ends by the server's timeout,
 * exactly at the limit; a pass (an empty plan) lets the turn run out in the same way. A refused
 * action (a move into an obstacle, End Turn with nothing queued, an instruction while the queue
 * is full) is counted and the agent is asked again; after `maxRefusalsPerTurn` refusals in one
 * turn the host passes the turn for it, so that an agent that keeps getting refused cannot loop.
 * An answer that is not an action of the seat, or an agent that fails, stops the game with an error.
 */
import { checkPlayerAction } from '../engine/legal';
import { DEFAULT_CONFIG } from '../engine/config';
import { byActor, type Action, type PlayerAction } from '../engine/actions';
import { emptyMemory, playerView, remember, type Memory } from '../engine/playerView';
import { Draw, seedRng } from '../engine/rng';
import { drawSetup, ROLES, type GameState, type Role } from '../engine/state';
import type { Outcome } from '../engine/transition';
import type { LogHeader, LogLine } from '../log/format';
import { GameRecorder, makeHeader } from '../log/recorder';
import { feedbackOfOutcome } from './feedback';
import { oracleData } from './observation';
import { FollowerSeatAdapter, LeaderSeatAdapter } from './seatAdapter';
import type { ActContext, AgentIdentity, FollowerAgent, LeaderAgent } from './types';
import { MAX_ACTIONS, timed, type SelfPlayOptions } from '../selfplay/game';

export interface AgentGameOptions extends SelfPlayOptions {
  readonly leader: LeaderAgent;
  readonly follower: FollowerAgent;
  /** Who plays each seat, for the log header's `meta.agents`. */
  readonly agents: { readonly leader: AgentIdentity; readonly follower: AgentIdentity };
  /** Refused actions in one turn after which the host passes the turn for the agent. */
  readonly maxRefusalsPerTurn?: number;
}

export const DEFAULT_MAX_REFUSALS_PER_TURN = 10;

export interface AgentGameResult {
  readonly state: GameState;
  readonly header: LogHeader;
  /** Actions the engine accepted (the log's events, timeouts included). */
  readonly actions: number;
  /** Actions refused, by seat. */
  readonly refused: Readonly<Record<Role, number>>;
  /** Turns the host passed for an agent that reached the refusal limit, by seat. */
  readonly refusalPasses: Readonly<Record<Role, number>>;
}

/** The host's own generator for the simulated clock: the seed mixed apart from the game's and the scripted players'. */
function clockDraw(seed: number): Draw {
  return new Draw(seedRng(seed ^ 0xc10c));
}

/** The seats: each agent's adapter, and the memory each player's view is built from. */
interface Seats {
  readonly leader: LeaderSeatAdapter;
  readonly follower: FollowerSeatAdapter;
  /** Both players witness a moment of the game (each remembers what it would see; the follower hears the leader's feedback `outcome` carries). */
  witness(state: GameState, outcome?: Outcome): void;
  /** The action the seat of `role` plays now (null: it passes); the agent is asked when its plan needs it. */
  next(role: Role, state: GameState, context: ActContext): Promise<PlayerAction | null>;
}

export async function playAgentGame(options: AgentGameOptions, write: (line: LogLine) => void): Promise<AgentGameResult> {
  const config = options.config ?? DEFAULT_CONFIG;
  const gameId = options.gameId ?? `selfplay-${options.seed}`;
  const header = makeHeader({
    gameId,
    startedAt: options.startedAt ?? new Date(0),
    seed: options.seed,
    config,
    map: options.map,
    setup: drawSetup(config, options.map, options.seed),
    meta: { source: 'selfplay', ...options.meta, agents: options.agents },
  });
  for (const agent of [options.leader, options.follower] as const) {
    if ((agent as FollowerAgent).needsRecording) throw new Error(`the ${agent.name} agent needs a recorded game; it cannot play a new one`);
  }
  const recorder = new GameRecorder(header, write);
  const seats = seatsFor(options.leader, options.follower);
  seats.witness(recorder.state);
  await options.leader.reset({ episodeId: gameId });
  await options.follower.reset({ episodeId: gameId });
  const draw = clockDraw(options.seed);
  const maxRefusals = options.maxRefusalsPerTurn ?? DEFAULT_MAX_REFUSALS_PER_TURN;
  const refused: Record<Role, number> = { leader: 0, follower: 0 };
  const refusalPasses: Record<Role, number> = { leader: 0, follower: 0 };

  let t = 0;
  let turnStart = 0;
  let actions = 0;
  let refusedThisTurn = 0;
  while (!recorder.state.gameOver) {
    if (actions + refused.leader + refused.follower >= MAX_ACTIONS) {
      throw new Error(`game ${gameId} did not end within ${MAX_ACTIONS} actions`);
    }
    const state = recorder.state;
    const role = state.turn.role;
    const passes = refusedThisTurn >= maxRefusals;
    if (passes) refusalPasses[role]++;
    const chosen = passes ? null : await seats.next(role, state, { event: actions });
    const timeout: Action = { type: 'timeout', actor: 'server', role };
    const { action, at } = timed(chosen ? byActor(role, chosen) : timeout, role, t, turnStart, draw);
    t = at;
    const refusal = action.type === 'timeout' ? null : checkPlayerAction(state, role, chosen!);
    const result = refusal ? null : recorder.apply(action, at);
    if (!result || !result.ok) {
      refused[role]++;
      refusedThisTurn++;
      seats[role].refused();
      continue;
    }
    actions++;
    seats.witness(result.state, result.outcome);
    if (result.outcome.turnEnded) {
      turnStart = t;
      refusedThisTurn = 0;
      seats.leader.turnEnded();
      seats.follower.turnEnded();
    }
  }
  recorder.end(t, 'turns-exhausted');
  return { state: recorder.state, header, actions, refused, refusalPasses };
}

function seatsFor(leader: LeaderAgent, follower: FollowerAgent): Seats {
  const memory: Record<Role, Memory> = { leader: emptyMemory('leader'), follower: emptyMemory('follower') };
  /** The state the seats are asked in: an oracle follower is given its whole data. */
  let asked: GameState;
  const adapters = { leader: new LeaderSeatAdapter(leader), follower: new FollowerSeatAdapter(follower, () => oracleData(asked)) };
  const names: Record<Role, string> = { leader: leader.name, follower: follower.name };
  return {
    ...adapters,
    witness(state, outcome) {
      for (const role of ROLES) memory[role] = remember(memory[role], state);
      const feedback = outcome && feedbackOfOutcome(outcome, state.config);
      if (feedback) adapters.follower.heard(feedback);
    },
    async next(role, state, context) {
      asked = state;
      const move = await adapters[role].next(playerView(state, role, memory[role]), (act) => act(context));
      if (move.kind === 'refused') throw new Error(`the ${role} agent ${JSON.stringify(names[role])} ${move.reason}`);
      return move.kind === 'action' ? move.action : null;
    },
  };
}
