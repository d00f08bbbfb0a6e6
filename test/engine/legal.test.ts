/**
 * The one list of legal actions and the one action vocabulary: legalActions agrees with step on
 * every state of real games, refusals come in the documented order, and codes convert both ways.
 */
import fc from 'fast-check';
import {
  ACTION_CODES,
  actionMask,
  actionOfCode,
  byActor,
  checkPlayerAction,
  codeOf,
  isActionCode,
  isFollowerCode,
  legalActions,
  MAX_INSTRUCTION_TEXT,
  MOVES,
  playerActionSchema,
  ROLES,
  sanitizeInstruction,
  step,
  withoutActor,
  type GameState,
  type PlayerAction,
} from '../../shared/engine';
import { makeState, selfPlayStates } from '../fixtures';
import { endTurn, expectRefused, mv, play, say } from './helpers';

const CANDIDATES: readonly PlayerAction[] = [
  ...MOVES.map((move): PlayerAction => ({ type: 'move', move })),
  { type: 'done' },
  { type: 'endTurn' },
  { type: 'instruction', text: 'go to the red star' },
];

/** Whether the legal actions list `action` (an instruction: allowed now and of a legal length). */
function listed(state: GameState, role: (typeof ROLES)[number], action: PlayerAction): boolean {
  const legal = legalActions(state, role);
  switch (action.type) {
    case 'move':
      return legal.moves.includes(action.move);
    case 'done':
      return legal.done;
    case 'endTurn':
      return legal.endTurn;
    case 'instruction':
      return legal.instruction && action.text.length <= legal.maxInstructionLength;
    case 'feedback':
      return legal.feedback;
    case 'cancel':
      return legal.cancel;
  }
}

describe('legalActions agrees with step', () => {
  const states = [...selfPlayStates(1), ...selfPlayStates(2)];
  const gameOver = states[states.length - 1];

  test('R-31: on every state of two self-play games, for both roles and every action', () => {
    let allowed = 0;
    let blocked = 0;
    for (const state of states) {
      for (const role of ROLES) {
        for (const action of CANDIDATES) {
          const refused = checkPlayerAction(state, role, action);
          const result = step(state, byActor(role, action));
          expect(refused === null).toBe(listed(state, role, action));
          if (refused === null) {
            allowed++;
            expect(result.ok).toBe(true);
            if (result.ok) expect(result.outcome.blocked).toBeUndefined();
          } else if (refused.code === 'MOVE_BLOCKED') {
            // The transition function accepts it as a no-op (old logs hold such events); no player is offered it.
            blocked++;
            expect(result.ok && result.outcome.blocked).toBe(true);
          } else {
            expect(result.ok).toBe(false);
            if (!result.ok) expect(result.error.code).toBe(refused.code);
          }
        }
      }
    }
    expect(allowed).toBeGreaterThan(1000);
    expect(blocked).toBeGreaterThan(0);
    expect(gameOver.gameOver).toBe(true);
  });

  test('nothing is legal once the game is over, and only the player in control may act', () => {
    for (const role of ROLES) expect(legalActions(gameOver, role)).toMatchObject({ moves: [], instruction: false, endTurn: false, done: false });
    const start = makeState();
    expect(legalActions(start, 'follower')).toMatchObject({ moves: [], instruction: false, endTurn: false, done: false });
    expect(legalActions(start, 'leader')).toMatchObject({ instruction: true, endTurn: false, done: false, maxInstructionLength: 300 });
  });

  test('R-27: End Turn with an empty queue follows the config', () => {
    expect(legalActions(makeState(), 'leader').endTurn).toBe(false);
    expect(legalActions(makeState({ config: { endTurnWithEmptyQueue: true } }), 'leader').endTurn).toBe(true);
    expect(legalActions(play(makeState(), say('go')).state, 'leader').endTurn).toBe(true);
  });

  test('the instruction limit is the config value', () => {
    const state = makeState({ config: { maxInstructionLength: 12 } });
    expect(legalActions(state, 'leader').maxInstructionLength).toBe(12);
    expect(checkPlayerAction(state, 'leader', { type: 'instruction', text: 'x'.repeat(13) })?.code).toBe('INSTRUCTION_TOO_LONG');
    expect(checkPlayerAction(state, 'leader', { type: 'instruction', text: 'x'.repeat(12) })).toBeNull();
  });

  test('R-57: the leader may not write an instruction while the queue is full', () => {
    const full = play(makeState({ config: { maxQueuedInstructions: 2 } }), say('a'), say('b')).state;
    expect(legalActions(full, 'leader')).toMatchObject({ instruction: false, endTurn: true });
    expect(checkPlayerAction(full, 'leader', { type: 'instruction', text: 'c' })?.code).toBe('QUEUE_FULL');
    expect(legalActions(play(makeState({ config: { maxQueuedInstructions: 2 } }), say('a')).state, 'leader').instruction).toBe(true);
  });

  test('R-24, R-44: moves into an obstacle or off the map are not offered, and refused as MOVE_BLOCKED', () => {
    // The fixture's follower at (1, 4): facing W its back is open, its front is the map's edge.
    const state = play(makeState({ follower: { x: 0, y: 4, heading: 'W' } }), say('go'), endTurn).state;
    expect(legalActions(state, 'follower').moves).toEqual(['MB', 'RL', 'RR']);
    const refused = checkPlayerAction(state, 'follower', { type: 'move', move: 'MF' });
    expect(refused?.code).toBe('MOVE_BLOCKED');
    expect(refused?.message).toMatch(/in the way/);
    // With no steps left, the step count is the reason, not the obstacle.
    const tired = play(makeState({ config: { leaderSteps: 1 } }), mv('leader', 'RL')).state;
    expect(legalActions(tired, 'leader').moves).toEqual([]);
    expect(checkPlayerAction(tired, 'leader', { type: 'move', move: 'MF' })?.code).toBe('NO_STEPS_LEFT');
  });

  test('the follower mask is in the order the codes are given', () => {
    const state = play(makeState({ follower: { x: 0, y: 4, heading: 'W' } }), say('go'), endTurn).state;
    const legal = legalActions(state, 'follower');
    expect(actionMask(legal, ['MF', 'MB', 'RL', 'RR', 'DONE'])).toEqual([false, true, true, true, true]);
    expect(actionMask(legal, ['END', 'DONE'])).toEqual([false, true]);
  });
});

describe('refusals come in the documented order (docs/rules.md)', () => {
  const state = makeState();

  test('R-34: a malformed action is MALFORMED_ACTION whoever sends it and however many steps are left', () => {
    expectRefused(state, { type: 'move', actor: 'follower', move: 'JUMP' } as never, 'MALFORMED_ACTION');
    const tired = play(makeState({ config: { leaderSteps: 1 } }), mv('leader', 'RL')).state;
    expectRefused(tired, { type: 'move', actor: 'leader', move: 'JUMP' } as never, 'MALFORMED_ACTION');
    expectRefused(state, { type: 'timeout', actor: 'server', role: 'nobody' } as never, 'MALFORMED_ACTION');
  });

  test("R-36, R-37, R-38, R-39: what a role may never do comes before whose turn it is", () => {
    expectRefused(state, { type: 'instruction', actor: 'follower', text: 'hi' }, 'FOLLOWER_CANNOT_INSTRUCT');
    expectRefused(state, { type: 'endTurn', actor: 'follower' }, 'FOLLOWER_CANNOT_END_TURN');
    const followerTurn = play(state, say('go'), endTurn).state;
    expectRefused(followerTurn, { type: 'done', actor: 'leader' }, 'LEADER_CANNOT_MARK_DONE');
    expectRefused(followerTurn, { type: 'instruction', actor: 'leader', text: '' }, 'NOT_YOUR_TURN');
  });
});

describe('the action vocabulary', () => {
  test('short codes convert both ways, and an instruction has none', () => {
    for (const code of ACTION_CODES) expect(codeOf(actionOfCode(code))).toBe(code);
    expect(codeOf({ type: 'instruction', text: 'x' })).toBeNull();
    expect(isActionCode('END')).toBe(true);
    expect(isFollowerCode('END')).toBe(false);
    expect(isFollowerCode('DONE')).toBe(true);
    expect(isFollowerCode(3)).toBe(false);
  });

  test('byActor and withoutActor are inverses', () => {
    for (const action of CANDIDATES) {
      for (const role of ROLES) {
        const full = byActor(role, action);
        expect(full).toMatchObject({ ...action, actor: role });
        expect(withoutActor(full as Parameters<typeof withoutActor>[0])).toEqual(action);
      }
    }
  });

  test('the edge schema accepts exactly the player actions', () => {
    for (const action of CANDIDATES) expect(playerActionSchema.parse(action)).toEqual(action);
    const bad = [
      'MF',
      null,
      { type: 'move' },
      { type: 'move', move: 'JUMP' },
      { type: 'move', move: 'MF', actor: 'leader' },
      { type: 'timeout', role: 'leader' },
      { type: 'instruction', text: 42 },
      { type: 'instruction', text: 'x'.repeat(MAX_INSTRUCTION_TEXT + 1) },
      { type: 'done', extra: true },
    ];
    for (const value of bad) expect(playerActionSchema.safeParse(value).success).toBe(false);
  });

  test('R-49: sanitising removes control characters and unpaired surrogates, collapses white space, trims, and keeps emoji', () => {
    expect(sanitizeInstruction('  go\u0007\n\nnorth\t ')).toBe('go north');
    expect(sanitizeInstruction('a\uD800b\uDC00c')).toBe('abc');
    expect(sanitizeInstruction('the \uD83C\uDF1F star')).toBe('the \uD83C\uDF1F star');
  });

  test('R-49: sanitising removes bidi controls and invisible characters, keeps ZWNJ and ZWJ, and leaves well-formed text', () => {
    // A right-to-left override makes "go east" display as "tsae og"; an isolate or an embedding hides the same.
    expect(sanitizeInstruction('go \u202Etsae\u202C now')).toBe('go tsae now');
    for (const mark of ['\u061C', '\u200E', '\u200F', '\u202A', '\u202B', '\u202D', '\u2066', '\u2067', '\u2068', '\u2069']) {
      expect(sanitizeInstruction(`turn${mark} left`)).toBe('turn left');
    }
    for (const invisible of ['\u200B', '\u2060', '\u2062', '\uFEFF', '\u206A']) expect(sanitizeInstruction(`ca${invisible}rd`)).toBe('card');
    expect(sanitizeInstruction('\u200B\uFEFF\u2060')).toBe(''); // the engine then refuses it as EMPTY_INSTRUCTION
    // Tag characters spell hidden ASCII ("hi" here) ...
    expect(sanitizeInstruction('go\u{E0001}\u{E0068}\u{E0069}\u{E007F}')).toBe('go');
    // ... but a subdivision flag (Scotland) is made of them and stays.
    const scotland = '\u{1F3F4}\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}';
    expect(sanitizeInstruction(`to the ${scotland} flag`)).toBe(`to the ${scotland} flag`);
    // ZWNJ in Persian ("I want"), ZWJ in a Malayalam chillu and in an emoji family: the text means something else without them.
    for (const kept of ['\u0645\u06CC\u200C\u062E\u0648\u0627\u0647\u0645', '\u0D28\u0D4D\u200D', '\u{1F469}\u200D\u{1F467}']) {
      expect(sanitizeInstruction(kept)).toBe(kept);
    }
    // Whatever comes in, what comes out is well formed (no lone surrogate) and has nothing left to remove.
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 60 }), (text) => {
        const clean = sanitizeInstruction(text);
        expect(Buffer.from(clean, 'utf8').toString('utf8')).toBe(clean); // UTF-8 round trips only well-formed text
        expect(sanitizeInstruction(clean)).toBe(clean);
      }),
      { numRuns: 2000 },
    );
  });
});
