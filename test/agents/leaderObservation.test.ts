/** The leader's observation (its playerView in the shape agents read) and its text. */
import { describeLeaderObservation, describeRelativePosition } from '../../shared/agents/language';
import { leaderObservationFromView } from '../../shared/agents/observation';
import { LEADER_OBSERVATION_VERSION } from '../../shared/agents/types';
import { emptyMemory, playerView, remember } from '../../shared/engine/playerView';
import type { GameState } from '../../shared/engine/state';
import { viewFrom } from '../../shared/engine/view';
import { done, endTurn, mv, play, say } from '../engine/helpers';
import { makeState, selfPlayStates } from '../fixtures';

function leaderView(state: GameState) {
  return playerView(state, 'leader', remember(emptyMemory('leader'), state));
}

describe('leaderObservationFromView', () => {
  test("carries the leader's view: the whole map, every card, both poses, the queue, the turn, what is legal", () => {
    const state = play(makeState(), say('pick up the 1 red star'), say('then the blue hearts')).state;
    const view = leaderView(state);
    const obs = leaderObservationFromView(view);
    expect(obs.version).toBe(LEADER_OBSERVATION_VERSION);
    expect(obs.role).toBe('leader');
    expect(obs.map).toBe(view.map);
    expect(obs.pose).toEqual(state.leader);
    expect(obs.follower).toEqual(state.follower);
    expect(obs.cards).toEqual(view.cards);
    expect(obs.instructions.map((i) => [i.text, i.status])).toEqual([
      ['pick up the 1 red star', 'current'],
      ['then the blue hearts', 'queued'],
    ]);
    expect(obs.turn).toEqual({ role: 'leader', stepsLeft: state.turn.stepsLeft });
    expect(obs.stepsLeft).toBe(state.turn.stepsLeft);
    expect(obs.turnsLeft).toBe(state.turnsLeft);
    expect(obs.legal).toEqual([...view.legal.moves, 'END']);
    expect(obs.canInstruct).toBe(true);
    expect(obs.maxInstructionLength).toBe(state.config.maxInstructionLength);
  });

  test("the cards the follower sees are the engine's view from the follower's pose", () => {
    for (const state of selfPlayStates(2).filter((_, i) => i % 40 === 0)) {
      const obs = leaderObservationFromView(leaderView(state));
      const seen = viewFrom(state.world, state.follower, state.config.view).set;
      expect(obs.visibleToFollower).toEqual(state.cards.filter((card) => seen.has(card.y * state.world.width + card.x)).map((c) => c.id).sort((a, b) => a - b));
    }
  });

  test("outside the leader's turn nothing is legal and its steps are 0", () => {
    const state = play(makeState(), say('pick up the 1 red star'), endTurn).state;
    const obs = leaderObservationFromView(leaderView(state));
    expect(obs.turn.role).toBe('follower');
    expect(obs.stepsLeft).toBe(0);
    expect(obs.turn.stepsLeft).toBe(state.config.followerSteps);
    expect(obs.legal).toEqual([]);
    expect(obs.canInstruct).toBe(false);
    expect(obs.instructions[0]).toMatchObject({ status: 'current', shown: true });
  });

  test("refuses the follower's view", () => {
    const state = makeState();
    expect(() => leaderObservationFromView(playerView(state, 'follower', remember(emptyMemory('follower'), state)))).toThrow(/leader's view/);
  });
});

describe('describeLeaderObservation', () => {
  test('names the turn, both players, every card from both poses, the selection, the instructions and what is legal', () => {
    const state = play(makeState(), say('pick up the 1 red star'), endTurn, mv('follower', 'MF'), done).state;
    const obs = leaderObservationFromView(leaderView(state));
    const text = describeLeaderObservation(obs);
    const lines = text.split('\n');
    expect(lines[0]).toMatch(/^You are the leader\. It is (your turn: you have \d+ steps? left|the follower's turn: it has \d+ steps? left)\. There are \d+ turns? left in the game\. The score is \d+\.$/);
    expect(lines[1]).toContain(`The follower is ${describeRelativePosition(obs.pose, obs.follower)}`);
    for (const card of obs.cards) {
      expect(text).toContain(`${describeRelativePosition(obs.pose, card)}: a card with`);
      expect(text).toContain(`from the follower ${describeRelativePosition(obs.follower, card, 'it')}`);
    }
    expect(text.match(/, in its view\./g)?.length ?? 0).toBe(obs.visibleToFollower.length);
    expect(text).toContain('- "pick up the 1 red star": done.');
    expect(describeLeaderObservation(obs)).toBe(text);
  });

  test('the selection: can it still make a set, and which cards would complete it', () => {
    for (const state of selfPlayStates(3)) {
      const obs = leaderObservationFromView(leaderView(state));
      const text = describeLeaderObservation(obs);
      const selected = obs.cards.filter((card) => card.selected).length;
      if (selected === 0) expect(text).toContain('No card is selected.');
      else if (obs.invalidCards.length > 0) expect(text).toContain('They cannot be part of a valid set');
      else expect(text).toContain('They can still be part of a valid set.');
      if (selected === 2 && obs.invalidCards.length === 0) expect(text).toMatch(/Cards that would complete the set: |No card on the board completes the set/);
    }
  });

  test('what is legal, in words; and the follower as "it"', () => {
    const state = makeState();
    const text = describeLeaderObservation(leaderObservationFromView(leaderView(state)));
    expect(text).toMatch(/You may now: .*RL \(turn left\), RR \(turn right\), an instruction to the follower \(at most 300 characters\)\./);
    expect(text).not.toContain('END (end your turn)'); // nothing queued yet
    expect(text).toContain('No instructions yet.');
    const theirs = play(state, say('go'), endTurn).state;
    expect(describeLeaderObservation(leaderObservationFromView(leaderView(theirs)))).toContain('You may do nothing now.');
  });
});
