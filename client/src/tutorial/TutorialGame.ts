/**
 * The tutorial's game, played in the page on the tutorial map (maps/tutorial.json) with a scripted
 * partner: the same engine, the same checks and the same playerView as a real game, but no server,
 * no clock and no log. The leader's partner is the server's scripted follower (the `heuristic`
 * agent); the follower's is a leader that asks for the cards of a valid set, one instruction a turn.
 * It is a GameConnection, so the game screen draws it as it draws a real game.
 */
import { HeuristicAgent } from '../../../shared/agents/builtin';
import { ObservationTracker } from '../../../shared/agents/observation';
import { followerSituation, PlanPlayer } from '../../../shared/agents/plans';
import type { AgentAction, FollowerAgent } from '../../../shared/agents/types';
import { actionOfCode, byActor, type PlayerAction } from '../../../shared/engine/actions';
import { describeCard, isValidSet, type Card } from '../../../shared/engine/cards';
import { makeConfig } from '../../../shared/engine/config';
import { cellCentre, headingVector, type Cell } from '../../../shared/engine/hex';
import { checkPlayerAction } from '../../../shared/engine/legal';
import { mapSchema } from '../../../shared/engine/map';
import { emptyMemory, playerView, remember, type Memory } from '../../../shared/engine/playerView';
import { seedRng } from '../../../shared/engine/rng';
import { startGame, type GameState, type Role } from '../../../shared/engine/state';
import { step } from '../../../shared/engine/transition';
import { isVisible } from '../../../shared/engine/view';
import { PathPlanner } from '../../../shared/nav/pathing';
import tutorialMap from '../../../maps/tutorial.json';
import { Events } from '../game/events';
import type { GameConnection, GameView, SessionEvents } from '../game/session';

const MAP = mapSchema.parse(tutorialMap);

/**
 * The map's own start poses and cards. The page holds the whole state (this is practice, not a
 * game with anything to hide), but not the setup draw: the bundle has no code that could rebuild
 * a real game's hidden start (test/client/bundle.test.ts).
 */
function tutorialStart(): GameState {
  const cards = (MAP.cards ?? []).map((card, id) => ({ id, ...card, selected: false }));
  // Turns enough to finish every step without hurrying.
  return startGame(makeConfig({ turnsPerPlayer: 30, cardCount: cards.length }), MAP, { ...MAP.spawn!, cards, rng: seedRng(1) });
}

/** Milliseconds between the scripted partner's actions, so that a person can follow them. */
export const PARTNER_STEP_MS = 350;
/** With no turn clock, a follower that keeps choosing blocked moves would hold its turn for ever: after this many in a row it presses Done. */
export const MAX_BLOCKED_CHOICES = 10;

export class TutorialGame implements GameConnection {
  readonly connected = true;
  view: GameView | null = null;
  private state: GameState = tutorialStart();
  private memory: Memory;
  private readonly events = new Events();
  private readonly tracker = new ObservationTracker();
  private readonly plans = new PlanPlayer<AgentAction>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private blockedChoices = 0;
  private stopped = false;

  constructor(
    readonly role: Role,
    /** The leader's partner (the server's scripted follower by default). */
    private readonly follower: FollowerAgent = new HeuristicAgent(),
  ) {
    this.memory = emptyMemory(role);
  }

  /** Starts the game: the first view, and the partner's first turn if it has it. */
  async start(): Promise<void> {
    await this.follower.reset({ episodeId: 'tutorial' });
    this.publish();
    this.events.emit('start', this.view!.map, this.view!.config);
    this.partnerTurn();
  }

  on<K extends keyof SessionEvents>(event: K, listener: SessionEvents[K]): void {
    this.events.on(event, listener);
  }

  send(action: PlayerAction): boolean {
    const refused = checkPlayerAction(this.state, this.role, action);
    if (refused) {
      this.events.emit('refused', { code: refused.code, message: refused.message, refused: action.type });
      return true;
    }
    this.apply(this.role, action);
    this.partnerTurn();
    return true;
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private apply(role: Role, action: PlayerAction): void {
    const result = step(this.state, byActor(role, action));
    if (!result.ok) throw new Error(`the tutorial's ${role} was refused: ${result.error.code}`);
    this.state = result.state;
    this.publish();
  }

  private current(): GameView {
    return { ...playerView(this.state, this.role, this.memory), phase: 'playing', turnDeadline: 0, partnerConnected: true, endReason: '' };
  }

  private publish(): void {
    this.memory = remember(this.memory, this.state);
    this.view = this.current();
    this.events.emit('state', this.view);
  }

  /** The partner plays its turn one action at a time. */
  private partnerTurn(): void {
    clearTimeout(this.timer);
    if (this.stopped || this.state.turn.role === this.role) return;
    this.timer = setTimeout(async () => {
      if (this.state.turn.role === 'follower') {
        const observation = this.tracker.observe(this.state);
        const code = await this.plans.next(followerSituation(observation.instruction), () => this.follower.act(observation));
        // With no turn clock a pass would hold the turn for ever: it presses Done.
        const action = code === null ? ({ type: 'done' } as const) : actionOfCode(code);
        // Like a person's, a blocked move is not played; the agent chooses again at its next step.
        if (checkPlayerAction(this.state, 'follower', action) === null) {
          this.blockedChoices = 0;
          this.apply('follower', action);
        } else {
          this.plans.refused();
          if (++this.blockedChoices >= MAX_BLOCKED_CHOICES) {
            this.blockedChoices = 0;
            this.apply('follower', { type: 'done' });
          }
        }
      } else {
        this.plans.turnEnded();
        for (const action of scriptedLeaderTurn(this.state)) this.apply('leader', action);
      }
      this.partnerTurn();
    }, PARTNER_STEP_MS);
  }
}

/**
 * The scripted leader's turn: one instruction asking for a card of a valid set not yet picked, then
 * End Turn. Like a leader watching the follower's view, it names a card the follower sees if it
 * can (the nearest by steps), and otherwise says which way to turn to find it.
 */
export function scriptedLeaderTurn(state: GameState): PlayerAction[] {
  const actions: PlayerAction[] = [];
  // End Turn needs an instruction in the queue.
  if (state.queue.length === 0) {
    const target = nextCardToAsk(state);
    const text = target ? `Walk to the card with ${describeCard(target)} and step on it.${whereToLook(state, target)}` : 'Look around you.';
    actions.push({ type: 'instruction', text });
  }
  actions.push({ type: 'endTurn' });
  return actions;
}

/** The card of the set to collect the follower should go to next: one in its view first, then the fewest steps away. */
function nextCardToAsk(state: GameState): Card | undefined {
  const planner = new PathPlanner(state.world);
  const steps = (card: Card) => {
    const length = planner.pathLength(state.cards, state.follower, card);
    return length < 0 ? Number.POSITIVE_INFINITY : length;
  };
  const rank = (card: Card) => (inFollowerView(state, card) ? 0 : 1);
  return setToCollect(state.cards)
    .filter((card) => !card.selected)
    .sort((a, b) => rank(a) - rank(b) || steps(a) - steps(b))[0];
}

function inFollowerView(state: GameState, cell: Cell): boolean {
  return isVisible(state.world, state.follower, state.config.view, cell);
}

/** For a card out of the follower's view, a sentence saying where to look for it; nothing for one in view. */
function whereToLook(state: GameState, card: Card): string {
  if (inFollowerView(state, card)) return '';
  const facing = headingVector(state.follower.heading);
  const from = cellCentre(state.follower);
  const to = cellCentre(card);
  const [dx, dz] = [to.x - from.x, to.z - from.z];
  const cosine = (dx * facing.x + dz * facing.z) / Math.hypot(dx, dz);
  // Inside the view's angle, so only out of its range.
  if (cosine >= Math.cos((state.config.view.fovDegrees / 2) * (Math.PI / 180))) return ' It is ahead of you, further than you can see.';
  if (cosine < -Math.cos(Math.PI / 3)) return ' It is behind you: turn round to find it.';
  // Counter-clockwise from the heading (x east, z north) is to the left.
  return facing.x * dz - facing.z * dx > 0 ? ' It is to your left: turn left to find it.' : ' It is to your right: turn right to find it.';
}

/** A valid set on the board, the one with the most cards already selected. */
export function setToCollect(cards: readonly Card[]): Card[] {
  let best: Card[] = [];
  let bestSelected = -1;
  for (let i = 0; i < cards.length; i++) {
    for (let j = i + 1; j < cards.length; j++) {
      for (let k = j + 1; k < cards.length; k++) {
        const trio = [cards[i], cards[j], cards[k]];
        if (!isValidSet(trio)) continue;
        const selected = trio.filter((card) => card.selected).length;
        if (selected > bestSelected) [best, bestSelected] = [trio, selected];
      }
    }
  }
  return best;
}
