/**
 * The seat adapter every host plays an agent through (playAgentGame, the server's agent seats,
 * `cerealbar agent`): the seat's view made the role's observation, plans, answers read as the
 * agent protocol reads them and made the game's actions, or refused with the reason.
 */
import { FollowerSeatAdapter, LeaderSeatAdapter, seatAdapterFor } from '../../shared/agents/seatAdapter';
import type { ActContext, AgentAction, Answer, FollowerAgent, FollowerObservation, LeaderAgent, LeaderAgentAction, LeaderObservation } from '../../shared/agents/types';
import { emptyMemory, playerView, remember, type PlayerView } from '../../shared/engine/playerView';
import { frameView } from '../../shared/frames/frame';
import type { Action } from '../../shared/engine/actions';
import type { Role } from '../../shared/engine/state';
import { makeState } from '../fixtures';
import { done, endTurn, play, say } from '../engine/helpers';

const FEEDBACK_RULES = { liveFeedback: true, cancelInstructions: true } as const;

/** The view of `role` after the leader wrote `texts` and ended its turn (the follower's turn), and after `then`. */
function followerTurnView(role: Role, texts = ['first', 'second'], config = {}, ...then: Action[]): PlayerView {
  const start = makeState({ config });
  const { state } = play(start, ...texts.map(say), endTurn, ...then);
  return playerView(state, role, remember(remember(emptyMemory(role), start), state));
}

/** The leader's view at the start of the game: its turn. */
function leaderTurnView(): PlayerView {
  const state = makeState();
  return playerView(state, 'leader', remember(emptyMemory('leader'), state));
}

function follower(answer: (observation: FollowerObservation) => Answer<AgentAction>, extra: Partial<FollowerAgent> = {}): FollowerAgent & { asked: FollowerObservation[]; contexts: (ActContext | undefined)[] } {
  const asked: FollowerObservation[] = [];
  const contexts: (ActContext | undefined)[] = [];
  const act = (observation: FollowerObservation, context?: ActContext) => {
    asked.push(observation);
    contexts.push(context);
    return answer(observation);
  };
  return { name: 'f', asked, contexts, reset: () => {}, act, ...extra };
}

function leader(answer: (observation: LeaderObservation) => Answer<LeaderAgentAction>): LeaderAgent & { asked: LeaderObservation[] } {
  const asked: LeaderObservation[] = [];
  const act = (observation: LeaderObservation) => {
    asked.push(observation);
    return answer(observation);
  };
  return { name: 'l', role: 'leader', asked, reset: () => {}, act };
}

describe('a leader agent in its seat', () => {
  test("its plan's actions in order, asked once for the turn; an empty plan passes until the turn ends", async () => {
    const agent = leader(() => [{ instruction: '  go  left ' }, 'END']);
    const seat = new LeaderSeatAdapter(agent);
    const view = leaderTurnView();
    expect(await seat.next(view)).toEqual({ kind: 'action', action: { type: 'instruction', text: 'go left' } });
    expect(await seat.next(view)).toEqual({ kind: 'action', action: { type: 'endTurn' } });
    expect(agent.asked).toHaveLength(1);
    expect(agent.asked[0].role).toBe('leader');

    const passing = new LeaderSeatAdapter(leader(() => []));
    expect(await passing.next(view)).toEqual({ kind: 'pass' });
    expect(await passing.next(view)).toEqual({ kind: 'pass' });
    passing.turnEnded();
    expect(await passing.next(view)).toEqual({ kind: 'pass' });
  });

  test("an answer that is none of the leader's actions is refused with the agent protocol's reason", async () => {
    const view = leaderTurnView();
    expect(await new LeaderSeatAdapter(leader(() => 'DONE' as LeaderAgentAction)).next(view)).toEqual({
      kind: 'refused',
      reason: 'answered the action "DONE"; legal actions are MF, MB, RL, RR, END and {"instruction": "..."}',
    });
    expect(await new LeaderSeatAdapter(leader(() => ({ instruction: 'x'.repeat(301) }))).next(view)).toEqual({
      kind: 'refused',
      reason: 'answered an instruction of 301 characters; at most 300',
    });
  });
});

describe('a follower agent in its seat', () => {
  test('its observation is of its own view; a plan holds for its instruction and is dropped when the instruction changes', async () => {
    const agent = follower((observation) => (observation.instruction?.text === 'first' ? ['RR', 'RR', 'DONE', 'RL'] : ['RL']));
    const seat = new FollowerSeatAdapter(agent);
    const view = followerTurnView('follower');
    expect(await seat.next(view)).toEqual({ kind: 'action', action: { type: 'move', move: 'RR' } });
    expect(await seat.next(view)).toEqual({ kind: 'action', action: { type: 'move', move: 'RR' } });
    expect(await seat.next(view)).toEqual({ kind: 'action', action: { type: 'done' } });
    // DONE was played: the plan's RL was made for "first".
    expect(await seat.next(followerTurnView('follower', ['first', 'second'], {}, done))).toEqual({ kind: 'action', action: { type: 'move', move: 'RL' } });
    expect(agent.asked.map((observation) => observation.instruction?.text)).toEqual(['first', 'second']);
    expect(agent.asked[0].oracle).toBeUndefined();
  });

  test('a refused action drops the rest of the plan; an answer that is not a follower action is refused with the reason', async () => {
    const agent = follower(() => ['MF', 'RR']);
    const seat = new FollowerSeatAdapter(agent);
    const view = followerTurnView('follower');
    await seat.next(view);
    seat.refused();
    expect(await seat.next(view)).toEqual({ kind: 'action', action: { type: 'move', move: 'MF' } });
    expect(agent.asked).toHaveLength(2);
    expect(await new FollowerSeatAdapter(follower(() => 'FLY' as AgentAction)).next(view)).toEqual({
      kind: 'refused',
      reason: 'answered the action "FLY"; legal actions are MF, MB, RL, RR, DONE',
    });
  });

  test("the leader's feedback notice is heard in its turn: the agent is asked again with it; forgotten when the turn ends", async () => {
    const agent = follower(() => ['RR', 'RR', 'RR']);
    const seat = seatAdapterFor({ role: 'follower', agent });
    const view = followerTurnView('follower', ['first'], FEEDBACK_RULES);
    await seat.next(view);
    seat.hear({ kind: 'cancelled' });
    seat.hear({ kind: 'feedback', signal: 'negative', afterStep: 1 });
    await seat.next(view);
    seat.turnEnded();
    await seat.next(view);
    expect(agent.asked.map((observation) => observation.feedback)).toEqual([[], [{ signal: 'negative', afterStep: 1 }], []]);
  });

  test("the host's hook asks the agent with the moment's context, or answers a pass for it", async () => {
    const agent = follower(() => 'DONE');
    const view = followerTurnView('follower');
    expect(await new FollowerSeatAdapter(agent).next(view, (act) => act({ event: 7 }))).toEqual({ kind: 'action', action: { type: 'done' } });
    expect(agent.contexts).toEqual([{ event: 7, frame: expect.any(Function) }]);
    // The view to draw for an agent shown pictures is the seat's own, the one its observation is made from.
    expect(agent.contexts[0]!.frame!()).toEqual(frameView(view));
    expect(await new FollowerSeatAdapter(agent).next(view, () => [])).toEqual({ kind: 'pass' });
    expect(agent.asked).toHaveLength(1);
  });

  test('an answer that comes after its turn ended leaves no plan behind', async () => {
    let release: (answer: Answer<AgentAction>) => void = () => {};
    // Its first answer comes when the test releases it; the next at once.
    const agent = follower(() => (agent.asked.length === 1 ? new Promise<Answer<AgentAction>>((resolve) => (release = resolve)) : ['RR', 'RR']) as Answer<AgentAction>);
    const seat = new FollowerSeatAdapter(agent);
    const view = followerTurnView('follower');
    const late = seat.next(view);
    seat.turnEnded();
    release(['MF', 'MF']);
    expect(await late).toEqual({ kind: 'action', action: { type: 'move', move: 'MF' } });
    // Its second MF is gone: the agent is asked again.
    expect(await seat.next(view)).toEqual({ kind: 'action', action: { type: 'move', move: 'RR' } });
    expect(agent.asked).toHaveLength(2);
  });

  test('the oracle data a host has is given only to an agent that asks for it', async () => {
    const oracle = { cards: [], leader: { x: 0, y: 0, heading: 0 }, queue: [] } as unknown as NonNullable<FollowerObservation['oracle']>;
    const view = followerTurnView('follower');
    const plain = follower(() => 'DONE');
    await new FollowerSeatAdapter(plain, () => oracle).next(view);
    expect(plain.asked[0].oracle).toBeUndefined();
    const wanting = follower(() => 'DONE', { wantsOracleObservation: true });
    await new FollowerSeatAdapter(wanting, () => oracle).next(view);
    expect(wanting.asked[0].oracle).toBe(oracle);
  });
});
