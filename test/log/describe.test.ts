/** Log events in words: every event type and every outcome flag. */
import { step, type Action, type GameState } from '../../shared/engine';
import { describeEvent, instructionNumber } from '../../shared/log/describe';
import { eventLine, type LogEvent } from '../../shared/log/format';
import { replay } from '../../shared/log/replay';
import { makeState, type StateSpec } from '../fixtures';
import { sampleLog } from './sample';

/** Plays `actions` from the fixture state; each event with the state before it. */
function play(spec: StateSpec, actions: Action[]): { event: LogEvent; before: GameState }[] {
  let state = makeState(spec);
  return actions.map((action, i) => {
    const result = step(state, action);
    if (!result.ok) throw new Error(`action ${i} refused: ${result.error.code}`);
    const before = state;
    state = result.state;
    return { event: eventLine(i + 1, 1000 * (i + 1), action, result.outcome), before };
  });
}

const describeAll = (played: { event: LogEvent; before: GameState }[]) => played.map(({ event, before }) => describeEvent(event, before.cards));

const instruct = (text = 'go'): Action => ({ type: 'instruction', actor: 'leader', text });
const endTurn: Action = { type: 'endTurn', actor: 'leader' };
const followerMove = (move: 'MF' | 'MB' | 'RL' | 'RR'): Action => ({ type: 'move', actor: 'follower', move });

test('the sample game, event by event: instructions, moves, a set, DONE, timeouts, a skipped turn', () => {
  const befores: GameState[] = [];
  const events: LogEvent[] = [];
  let previous: GameState | null = null;
  replay(sampleLog().text, {
    onState: (state, event) => {
      if (event && previous) {
        befores.push(previous);
        events.push(event);
      }
      previous = state;
    },
  });
  expect(events.map((event, i) => describeEvent(event, befores[i].cards))).toEqual([
    ['The leader wrote instruction 1: “pick up the three cards ahead of you”'],
    ['The leader moved forward'],
    ['The leader wrote instruction 2: “then turn around”'],
    ['The leader ended the turn', "The follower's turn begins"],
    ['The follower moved forward', 'The follower selected 1 red star'],
    ['The follower moved forward', 'The follower selected 2 blue hearts'],
    ['The follower moved forward', 'The follower selected 3 green cubes', 'Set made: +1 point, 3 new cards, +5 turns'],
    ['The follower marked instruction 1 done'],
    ['The follower turned right'],
    ['The follower turned right'],
    ["The follower's turn timed out", "The leader's turn begins (10 turns left)"],
    ['The leader turned left'],
    ['The leader moved forward', 'The leader selected 2 orange diamonds'],
    ['The leader ended the turn', "The follower's turn begins"],
    ['The follower marked instruction 2 done', "All instructions are done: the leader's turn begins (9 turns left)"],
    ["The leader's turn timed out", "No instructions are queued, so the follower's turn is skipped: the leader's turn begins (8 turns left)"],
  ]);
});

test('moving back, a blocked move (water ahead), and a deselected card', () => {
  const played = play({ leader: { x: 3, y: 2, heading: 'E' } }, [
    { type: 'move', actor: 'leader', move: 'MF' },
    { type: 'move', actor: 'leader', move: 'MB' },
    instruct(),
    endTurn,
    followerMove('MF'),
    followerMove('MB'),
    followerMove('MF'),
  ]);
  expect(played[0].event.outcome.blocked).toBe(true);
  expect(describeAll(played)).toEqual([
    ['The leader moved forward (blocked)'],
    ['The leader moved back'],
    ['The leader wrote instruction 1: “go”'],
    ['The leader ended the turn', "The follower's turn begins"],
    ['The follower moved forward', 'The follower selected 1 red star'],
    ['The follower moved back'],
    ['The follower moved forward', 'The follower deselected 1 red star'],
  ]);
});

test('a card missing from the cards before is named by its id', () => {
  const toggling = play({}, [instruct(), endTurn, followerMove('MF')])[2].event;
  expect(describeEvent(toggling, [])).toEqual(['The follower moved forward', 'The follower toggled card 0']);
});

test('running out of steps hands control back, or ends the game on the last round', () => {
  const goesOn = play({ config: { followerSteps: 1, turnsPerPlayer: 2 } }, [instruct(), endTurn, followerMove('RL')]);
  expect(describeAll(goesOn)[2]).toEqual(['The follower turned left', "The follower is out of steps: the leader's turn begins (1 turn left)"]);

  const last = play({ config: { followerSteps: 1, turnsPerPlayer: 1 } }, [instruct(), endTurn, followerMove('RL')]);
  expect(last[2].event.outcome.gameOver).toBe(true);
  expect(describeAll(last)[2]).toEqual(['The follower turned left', 'The follower is out of steps', 'Game over: final score 0']);
});

test('a timeout on the last round ends the game without naming a next turn', () => {
  const played = play({ config: { turnsPerPlayer: 1 } }, [instruct(), endTurn, { type: 'timeout', actor: 'server', role: 'follower' }]);
  expect(describeAll(played)[2]).toEqual(["The follower's turn timed out", 'Game over: final score 0']);
});

test("the leader's timeout with instructions queued starts the follower's turn", () => {
  const played = play({}, [instruct(), { type: 'timeout', actor: 'server', role: 'leader' }]);
  expect(describeAll(played)[1]).toEqual(["The leader's turn timed out", "The follower's turn begins"]);
});

test('End Turn with an empty queue skips the follower when the config allows it', () => {
  const played = play({ config: { endTurnWithEmptyQueue: true } }, [endTurn]);
  expect(played[0].event.outcome.turnEnded).toEqual({ reason: 'end-turn', followerSkipped: true });
  expect(describeAll(played)[0]).toEqual([
    'The leader ended the turn',
    "No instructions are queued, so the follower's turn is skipped: the leader's turn begins (5 turns left)",
  ]);
});

test('sets after the extra-turn schedule, or with a single extra turn', () => {
  const setActions = [instruct(), endTurn, followerMove('MF'), followerMove('MF'), followerMove('MF')];
  expect(describeAll(play({ config: { extraTurns: [] } }, setActions))[4][2]).toBe('Set made: +1 point, 3 new cards, no extra turns');
  expect(describeAll(play({ config: { extraTurns: [1] } }, setActions))[4][2]).toBe('Set made: +1 point, 3 new cards, +1 turn');
});

test('instructions are numbered from 1', () => {
  expect(instructionNumber(0)).toBe(1);
  expect(instructionNumber(41)).toBe(42);
});
