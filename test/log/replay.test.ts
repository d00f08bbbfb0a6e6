/** Replay re-simulates logs exactly and refuses every kind of corrupt log, naming the line. */
import { replay, LogError } from '../../shared/log/replay';
import type { LogEvent, LogLine } from '../../shared/log/format';
import { GameRecorder, makeHeader } from '../../shared/log/recorder';
import { makeState } from '../fixtures';
import { sampleLog, toText } from './sample';

/** Line numbers in the sample: 1 header, 2..17 events, 18 end. */
const lineOf = (seq: number) => seq + 1;

function expectLogError(text: string, line: number, pattern: RegExp): void {
  let error: unknown;
  try {
    replay(text);
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(LogError);
  const logError = error as LogError;
  expect({ line: logError.line, message: logError.message }).toEqual({ line, message: expect.stringMatching(pattern) });
  if (line > 0) expect(logError.message.startsWith(`line ${line}: `)).toBe(true);
}

/** The sample's lines as plain JSON objects, to tamper with. */
function tamper(edit: (lines: Record<string, any>[]) => void): string {
  const lines = JSON.parse(JSON.stringify(sampleLog().lines)) as Record<string, any>[];
  edit(lines);
  return toText(lines);
}

const event = (lines: Record<string, any>[], seq: number) => lines[seq] as LogEvent & Record<string, any>;

/** What a server's agent seat records (P-147), at the time of the sample's 8th event (the follower's DONE). */
const seatFailure = { kind: 'agentSeat', t: 8000, role: 'follower', type: 'failed', reason: 'error' } as const;
const seatMarkedDone = { kind: 'agentSeat', t: 8000, role: 'follower', type: 'markedDone', instruction: 0 } as const;

describe('replay of a consistent log', () => {
  test('re-simulates every event and reports the final state', () => {
    const { text, lines } = sampleLog();
    const result = replay(text);
    expect(result.events).toBe(16);
    expect(result.final.score).toBe(1);
    expect(result.end?.reason).toBe('abandoned');
    expect(result.usedRecordedCards).toBe(false);
    const set = (lines.find((l) => l.kind === 'event' && l.outcome.set) as LogEvent).outcome.set!;
    expect(set.cards).toEqual([0, 1, 2]);
    expect(set.added).toHaveLength(3);
  });

  test('exercises the sample: a set, DONE, follower and leader timeouts, a skipped follower turn', () => {
    const events = sampleLog().lines.filter((l): l is LogEvent => l.kind === 'event');
    const ends = events.map((e) => e.outcome.turnEnded).filter(Boolean);
    expect(ends).toEqual([
      { reason: 'end-turn' },
      { reason: 'timeout' },
      { reason: 'end-turn' },
      { reason: 'all-done' },
      { reason: 'timeout', followerSkipped: true },
    ]);
  });

  test('a log without a trailing newline is fine', () => {
    expect(replay(sampleLog().text.trimEnd()).events).toBe(16);
  });

  test('onState sees the initial state and the state after each event', () => {
    const scores: number[] = [];
    replay(sampleLog().text, { onState: (state) => scores.push(state.score) });
    expect(scores).toHaveLength(17);
    expect(scores[0]).toBe(0);
    expect(scores[16]).toBe(1);
  });

  test('a log of another engine version replays with its recorded replacement cards', () => {
    const text = tamper((lines) => {
      lines[0].engineVersion = '0.9.0';
      const set = event(lines, 7).outcome.set!;
      // Faces another generator could have drawn, on the recorded cells (the leader later steps on
      // card 5), with a valid set still on the board.
      const faces = [
        { color: 'orange', shape: 'diamond', count: 1 },
        { color: 'black', shape: 'plus', count: 3 },
        { color: 'pink', shape: 'torus', count: 2 },
      ] as const;
      set.added = set.added.map((card, i) => ({ ...card, ...faces[i] }));
    });
    const result = replay(text);
    expect(result.usedRecordedCards).toBe(true);
    expect(result.final.cards.map((c) => c.id).sort()).toEqual([3, 4, 5, 6, 7]);
    expect(result.final.cards.find((c) => c.id === 6)).toMatchObject({ color: 'black', shape: 'plus', count: 3 });
    expect(result.final.cards.find((c) => c.id === 5)).toMatchObject({ color: 'orange', selected: true });
  });
});

describe('R-57: logs written before the queue had a cap', () => {
  /** A game of 60 instructions in one leader turn, recorded without a cap. */
  function longQueueLog(): Record<string, any>[] {
    const start = makeState({ config: { maxQueuedInstructions: null } });
    const header = makeHeader({
      gameId: 'long-queue',
      startedAt: new Date(0),
      seed: 1,
      config: start.config,
      map: start.world.map,
      setup: { leader: start.leader, follower: start.follower, cards: start.cards, rng: start.rng },
    });
    const lines: LogLine[] = [];
    const recorder = new GameRecorder(header, (line) => lines.push(line));
    for (let i = 0; i < 60; i++) recorder.apply({ type: 'instruction', actor: 'leader', text: `step ${i}` }, i);
    recorder.end(60, 'abandoned');
    return JSON.parse(JSON.stringify(lines));
  }

  test('R-57: a header without maxQueuedInstructions replays with no cap; one with the cap refuses the 51st instruction', () => {
    const old = longQueueLog();
    delete old[0].config.maxQueuedInstructions;
    expect(replay(toText(old)).final.queue).toHaveLength(60);
    const capped = longQueueLog();
    capped[0].config.maxQueuedInstructions = 50;
    expectLogError(toText(capped), 52, /QUEUE_FULL/);
  });
});

describe("P-147: an agent seat's lines", () => {
  test('are kept by replay, which passes over them: the game is the same', () => {
    const text = tamper((l) => void l.splice(9, 0, seatFailure, seatMarkedDone));
    const result = replay(text);
    expect(result.agentSeats).toEqual([seatFailure, seatMarkedDone]);
    expect({ ...result, agentSeats: [] }).toEqual(replay(sampleLog().text));
  });

  test("are written by the recorder at a time not before the last action's, and change nothing", () => {
    const lines: LogLine[] = [];
    const start = makeState();
    const setup = { leader: start.leader, follower: start.follower, cards: start.cards, rng: start.rng };
    const recorder = new GameRecorder(makeHeader({ gameId: 'seat', startedAt: new Date(0), seed: 1, config: start.config, map: start.world.map, setup }), (line) => lines.push(line));
    expect(recorder.apply({ type: 'instruction', actor: 'leader', text: 'go' }, 500).ok).toBe(true);
    const before = recorder.state;
    recorder.agentSeat({ role: 'follower', type: 'failed', reason: 'late' }, 400);
    expect(lines.at(-1)).toEqual({ kind: 'agentSeat', t: 500, role: 'follower', type: 'failed', reason: 'late' });
    expect(recorder.state).toBe(before);
    expect(recorder.events).toBe(1);
  });
});

describe('replay refuses corrupt logs, naming the line', () => {
  const cases: [string, () => string, number, RegExp][] = [
    ['an empty file', () => '', 0, /the log is empty/],
    ['a file of blank space', () => '\n', 1, /not JSON/],
    ['a header that is not JSON', () => `{"kind":"header",\n${sampleLog().text}`, 1, /not JSON/],
    ['no header first', () => toText(sampleLog().lines.slice(1)), 1, /first line must be the header, found kind "event"/],
    ['an unsupported format version', () => tamper((l) => { l[0].formatVersion = 99; }), 1, /bad header: formatVersion/],
    ['a header without the map', () => tamper((l) => { delete l[0].map; }), 1, /bad header: map/],
    ['a map row of the wrong width', () => tamper((l) => { l[0].map.terrain[3] = 'GG'; }), 1, /bad header: map.terrain.3: row 3 has 2 cells/],
    ['a config out of range', () => tamper((l) => { l[0].config.leaderSteps = -1; }), 1, /bad header: config.leaderSteps/],
    ['an initial card in the water', () => tamper((l) => { Object.assign(l[0].initial.cards[4], { x: 4, y: 2 }); }), 1, /cannot start a game: initial cards: card 4 at \(4, 2\)/],
    ['a player off the map', () => tamper((l) => { l[0].initial.leader.x = 40; }), 1, /cannot start a game: the leader starts at \(40, 1\)/],
    ['a line that is not an object', () => tamper((l) => { l.splice(3, 0, [1, 2] as never); }), 4, /must be a JSON object/],
    ['an unknown line kind', () => tamper((l) => { l[2].kind = 'chat'; }), 3, /unknown line kind "chat"/],
    ['a second header', () => tamper((l) => { l.splice(2, 0, l[0]); }), 3, /a second header/],
    ['an unknown action type', () => tamper((l) => { event(l, 5).type = 'jump' as never; }), lineOf(5), /bad event: type/],
    ['an unknown move', () => tamper((l) => { event(l, 5).payload = { move: 'XX' } as never; }), lineOf(5), /bad event: payload.move/],
    ['an unknown field', () => tamper((l) => { event(l, 5).extra = 1; }), lineOf(5), /bad event: .*extra/],
    ['a missing outcome', () => tamper((l) => { delete l[5].outcome; }), lineOf(5), /bad event: outcome/],
    ['a skipped sequence number', () => tamper((l) => { l.splice(5, 1); }), 6, /event seq is 6, expected 5/],
    ['time going backwards', () => tamper((l) => { event(l, 6).t = 10; }), lineOf(6), /time goes backwards: 10 ms after 5000 ms/],
    ['an action out of turn', () => tamper((l) => { event(l, 2).actor = 'follower'; }), lineOf(2), /engine refuses this move by the follower: NOT_YOUR_TURN/],
    ['an undefined action', () => tamper((l) => { event(l, 8).actor = 'leader'; }), lineOf(8), /LEADER_CANNOT_MARK_DONE/],
    ['a wrong score', () => tamper((l) => { event(l, 7).outcome.score = 2; }), lineOf(7), /outcome differs from the rules: outcome.score: recorded 2, replay gives 1/],
    ['a wrong pose', () => tamper((l) => { event(l, 5).outcome.pose!.heading = 'W' as never; }), lineOf(5), /outcome.pose.heading: recorded "W", replay gives "E"/],
    ['a missing toggle', () => tamper((l) => { delete (event(l, 5).outcome as { toggled?: unknown }).toggled; }), lineOf(5), /outcome.toggled: recorded nothing, replay gives \[0\]/],
    ['tampered replacement cards', () => tamper((l) => { const c = event(l, 7).outcome.set!.added[0]; (c as any).count = (c.count % 3) + 1; }), lineOf(7), /outcome.set.added.0.count/],
    ['illegal replacement cards from another version', () => tamper((l) => { l[0].engineVersion = '0.9.0'; Object.assign(event(l, 7).outcome.set!.added[0], { x: 4, y: 2 }); }), lineOf(7), /BAD_REPLACEMENT_CARDS: .*\(4, 2\)/],
    ['a wrong turn count', () => tamper((l) => { event(l, 11).outcome.turnsLeft = 12; }), lineOf(11), /outcome.turnsLeft: recorded 12, replay gives 10/],
    ['an empty line', () => tamper((l) => { l.splice(4, 0, '' as never); }).replace('""\n', '\n'), 5, /empty line/],
    ['a cut-off last line', () => sampleLog().text.slice(0, -30), 18, /the last line is cut off/],
    ['no end line', () => toText(sampleLog().lines.slice(0, -1)), 17, /stops here without an end line/],
    ['content after the end line', () => `${sampleLog().text}${JSON.stringify(sampleLog().lines[1])}\n`, 19, /content after the end line \(line 18\)/],
    ['a wrong final score', () => tamper((l) => { l[17].score = 5; }), 18, /end line says score 5, replay gives 1/],
    ['an end time before the last event', () => tamper((l) => { l[17].t = 5; }), 18, /end time 5 ms is before the last event/],
    ['turns said to run out while some are left', () => tamper((l) => { l[17].reason = 'turns-exhausted'; }), 18, /turns ran out, but 8 turns are left/],
    ['an unknown end reason', () => tamper((l) => { l[17].reason = 'bored'; }), 18, /bad end line: reason/],
    ['an agent seat line of an unknown failure', () => tamper((l) => { l.splice(9, 0, { ...seatFailure, reason: 'bored' }); }), 10, /bad agent seat line: reason/],
    ['an agent seat line with an unknown field', () => tamper((l) => { l.splice(9, 0, { ...seatFailure, message: 'the model is down' }); }), 10, /bad agent seat line: .*message/],
    ['an agent seat line before the last event', () => tamper((l) => { l.splice(9, 0, { ...seatFailure, t: 10 }); }), 10, /time goes backwards: 10 ms after 8000 ms/],
  ];

  test.each(cases)('%s', (_name, make, line, pattern) => expectLogError(make(), line, pattern));

  test('never throws anything but a LogError on random garbage', () => {
    const { text } = sampleLog();
    for (let i = 0; i < 300; i++) {
      const cut = (i * 7919) % text.length;
      const garbled = text.slice(0, cut) + String.fromCharCode(32 + (i % 90)) + text.slice(cut + 1);
      try {
        replay(garbled);
      } catch (error) {
        expect(error).toBeInstanceOf(LogError);
      }
    }
  });
});

describe('a game that ran out of turns', () => {
  const timeouts = (n: number) => Array.from({ length: n }, () => ({ type: 'timeout', actor: 'server', role: 'leader' }) as const);

  test('ends with turns-exhausted, and another reason is refused', () => {
    const { lines, text } = sampleLog('abandoned', timeouts(8));
    expect(lines[lines.length - 1]).toMatchObject({ kind: 'end', reason: 'turns-exhausted' });
    expect(replay(text).final.gameOver).toBe(true);
    const edited = JSON.parse(JSON.stringify(lines));
    edited[edited.length - 1].reason = 'abandoned';
    expectLogError(toText(edited), lines.length, /the turns ran out but the end line says "abandoned"/);
  });

  test('an event after the game ended is refused by the engine', () => {
    const { lines } = sampleLog('abandoned', timeouts(8));
    const edited = JSON.parse(JSON.stringify(lines));
    const last = edited[edited.length - 2];
    edited.splice(edited.length - 1, 0, { ...last, seq: last.seq + 1 });
    expectLogError(toText(edited), lines.length, /GAME_OVER/);
  });
});
