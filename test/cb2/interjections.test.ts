/**
 * CB2's live feedback and cancels, imported: the real games' feedback, and synthetic games (a real
 * game's start, then CB2's messages for feedback and cancels at the moments that matter) for what
 * the real games lack. Each is replayed through the engine and compared with what CB2 counted.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { CB2_FILES, importCb2Game, type Cb2Game } from '../../shared/cb2/import';
import type { LogEvent, LogLine } from '../../shared/log/format';
import { serializeLine } from '../../shared/log/recorder';
import { replay } from '../../shared/log/replay';
import { Cb2Script, FEEDBACK_GAME, feedbackAndCancelGame, scriptAfterFirstInstruction } from './cb2Script';

const FIXTURES = join(__dirname, '..', 'fixtures', 'cb2-logs');
const logText = (lines: readonly LogLine[]) => lines.map((line) => `${serializeLine(line)}\n`).join('');
const eventsOf = (lines: readonly LogLine[]) => lines.filter((line): line is LogEvent => line.kind === 'event');
/** The events from the first of `type` on, as `type:detail` words. */
function story(lines: readonly LogLine[], from: number): string[] {
  return eventsOf(lines)
    .slice(from)
    .map((event) => {
      if (event.type === 'move') return event.payload.move;
      if (event.type === 'feedback') return `${event.payload.signal}@${event.outcome.feedback!.instruction}/${10 - event.outcome.turn.stepsLeft}`;
      if (event.type === 'cancel') return `cancel[${event.outcome.cancelled!.join(',')}]`;
      if (event.type === 'instruction' || event.type === 'done') return `${event.type}#${event.outcome.instruction}`;
      return event.type;
    });
}
/** CB2's last instruction list (the leader's copy): each instruction's feedback counters. */
function cb2Counters(game: Cb2Game): { pos: number; neg: number; cancelled: boolean }[] {
  const lists = game.messagesFromServer
    .split('\n')
    .map((line) => JSON.parse(line))
    .filter((entry) => entry.player_id === 21 && entry.message_from_server.type === 4);
  return lists.at(-1).message_from_server.objectives.map((o: any) => ({ pos: o.pos_feedback, neg: o.neg_feedback, cancelled: o.cancelled }));
}

describe('live feedback in the real CB2 games', () => {
  const folders = readFileSync(join(FIXTURES, 'README.md'), 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('| gemini_'))
    .map((line) => line.split('|')[1].trim());

  test('the one signal of the 20 games (game 34, positive, three steps into the follower turn) is imported; the rest have none', () => {
    const unzip = (folder: string, name: string) => gunzipSync(readFileSync(join(FIXTURES, folder, `${name}.gz`))).toString('utf8');
    const found = folders.flatMap((folder) => {
      const game = { name: folder.split('/').at(-1)!, origin: '.', gameInfo: unzip(folder, CB2_FILES.gameInfo), messagesFromServer: unzip(folder, CB2_FILES.messagesFromServer) };
      // CB2's own messages: the signals it sent the leader.
      const sent = game.messagesFromServer.split('\n').filter((line) => line.includes('"type":8,')).map((line) => JSON.parse(line)).filter((entry) => entry.player_id === 21);
      const imported = importCb2Game(game);
      expect(imported.droppedFeedback).toEqual([]);
      const feedback = eventsOf(imported.lines).filter((event) => event.type === 'feedback');
      expect(feedback).toHaveLength(sent.length);
      return feedback.map((event) => ({ folder, signal: event.payload, instruction: event.outcome.feedback!.instruction, stepsLeft: event.outcome.turn.stepsLeft }));
    });
    expect(found).toEqual([{ folder: FEEDBACK_GAME, signal: { signal: 'positive' }, instruction: 1, stepsLeft: 7 }]);
  });
});

describe('a synthetic CB2 game with feedback and a cancel', () => {
  const game = feedbackAndCancelGame();
  const imported = importCb2Game(game);
  const before = eventsOf(importCb2Game(scriptAfterFirstInstruction().game()).lines).length;

  test('every signal and the cancel become events, in order, tied to the instruction current then', () => {
    expect(story(imported.lines, before)).toEqual([
      'instruction#1',
      'instruction#2',
      'endTurn',
      'RR',
      'positive@1/1',
      'RR',
      'negative@1/2',
      'cancel[1,2]',
      'instruction#3',
      'endTurn',
      'positive@3/0',
      'RL',
      'RL',
      'done#3',
    ]);
    expect(imported.droppedFeedback).toEqual([]);
  });

  test("the log replays, and its counts per instruction are CB2's own counters", () => {
    const replayed = replay(logText(imported.lines));
    expect(replayed.final.cancelled.map(({ id, current }) => ({ id, current }))).toEqual([
      { id: 1, current: true },
      { id: 2, current: false },
    ]);
    const counted = [0, 1, 2, 3].map((id) => {
      const signals = eventsOf(imported.lines).filter((event) => event.outcome.feedback?.instruction === id);
      return {
        pos: signals.filter((event) => event.outcome.feedback!.signal === 'positive').length,
        neg: signals.filter((event) => event.outcome.feedback!.signal === 'negative').length,
        cancelled: replayed.final.cancelled.some((instruction) => instruction.id === id),
      };
    });
    expect(counted).toEqual(cb2Counters(game));
  });
});

describe('feedback at the edges, as CB2 takes it', () => {
  /** The follower's turn of one instruction, with `middle` scripted in it. */
  const inTurn = (middle: (script: ReturnType<typeof scriptAfterFirstInstruction>) => void) => {
    const script = scriptAfterFirstInstruction().instruction('turn').tick().endTurn().tick();
    middle(script);
    return script.game();
  };

  test("a signal before the follower's first move of the game (CB2's feedback then has no move to follow): imported, 0 steps in", () => {
    // Game 12's start, where no one has moved yet.
    const game = new Cb2Script('gemini_text/bot-sandbox/2024-04-06T16h.26m.16s_12_GAME', 11).instruction('turn').tick().endTurn().tick().feedback(2).tick().rotate(60).tick().done().tick().game();
    const imported = importCb2Game(game);
    expect(story(imported.lines, 0)).toEqual(['instruction#0', 'endTurn', 'negative@0/0', 'RR', 'done#0']);
    expect(imported.droppedFeedback).toEqual([]);
  });

  test('a signal of NONE, which CB2 drops on arrival, is left out and listed with its line', () => {
    const game = inTurn((script) => script.rotate(60).tick().feedback(0).tick().rotate(60).tick());
    const imported = importCb2Game(game);
    expect(eventsOf(imported.lines).filter((event) => event.type === 'feedback')).toEqual([]);
    const line = game.messagesFromServer.split('\n').findIndex((text) => text.includes('"live_feedback":{"signal":0}')) + 1;
    expect(imported.droppedFeedback).toEqual([{ line, reason: 'a signal of NONE, which CB2 drops' }]);
  });

  test("a signal in the leader's turn, which CB2 drops on arrival, is left out and listed", () => {
    const game = inTurn((script) => script.rotate(60).tick().done().tick().feedback(2).tick());
    const imported = importCb2Game(game);
    expect(eventsOf(imported.lines).filter((event) => event.type === 'feedback')).toEqual([]);
    expect(imported.droppedFeedback).toEqual([{ line: expect.any(Number), reason: "negative feedback in the leader's turn, which CB2 drops" }]);
  });

  test("a signal CB2 reports after the follower's last step of its turn, in the same update, came in the follower's turn: imported before that step", () => {
    // CB2 checks a signal against the turn as it arrives and handles it after the update's moves.
    const game = inTurn((script) => {
      for (let step = 0; step < 9; step++) script.rotate(60).tick();
      script.rotate(60).feedback(2).tick();
    });
    const text = game.messagesFromServer.split('\n');
    const signal = text.findIndex((line) => line.includes('"live_feedback":{"signal":2}'));
    expect(text[signal - 1]).toContain('"turn":2,');
    const imported = importCb2Game(game);
    expect(imported.droppedFeedback).toEqual([]);
    expect(story(imported.lines, -3)).toEqual(['RR', 'negative@1/9', 'RR']);
    replay(logText(imported.lines));
  });

  test('the command line names every signal it left out, on stderr and in the JSON report', () => {
    const game = inTurn((script) => script.rotate(60).tick().feedback(0).tick().done().tick().feedback(2).tick());
    const folder = join(mkdtempSync(join(tmpdir(), 'cb2-feedback-')), game.name);
    mkdirSync(folder);
    writeFileSync(join(folder, CB2_FILES.gameInfo), game.gameInfo);
    writeFileSync(join(folder, CB2_FILES.messagesFromServer), game.messagesFromServer);
    const bin = join(__dirname, '..', '..', 'bin', 'cerealbar.cjs');
    const run = spawnSync(process.execPath, [bin, 'import', 'cb2', folder, '--out', join(folder, '..', 'out'), '--json'], { encoding: 'utf8', timeout: 120_000 });
    expect(run.status).toBe(0);
    const dropped = importCb2Game(game).droppedFeedback;
    expect(dropped.map(({ reason }) => reason)).toEqual(['a signal of NONE, which CB2 drops', "negative feedback in the leader's turn, which CB2 drops"]);
    expect(JSON.parse(run.stdout).imported[0].droppedFeedback).toEqual(dropped);
    expect(run.stderr).toBe(dropped.map(({ line, reason }) => `cerealbar: feedback left out: ${folder}: line ${line}: ${reason}\n`).join(''));
  });

  test('a signal that is not one of CB2 is an error naming the line', () => {
    const game = inTurn((script) => script.feedback(3).tick());
    const line = game.messagesFromServer.split('\n').findIndex((text) => text.includes('"live_feedback":{"signal":3}')) + 1;
    expect(() => importCb2Game(game)).toThrow(`${game.name}/${CB2_FILES.messagesFromServer}: line ${line}: live feedback with the signal 3: CB2's are 1 (positive) and 2 (negative)`);
  });
});

describe('cancels CB2 would not send', () => {
  test("a cancel that leaves a queued instruction open (CB2 cancels them all) stops the import", () => {
    const game = scriptAfterFirstInstruction().instruction('one').instruction('two').tick().endTurn().tick().rotate(60).tick().cancel(1).tick().game();
    expect(() => importCb2Game(game)).toThrow(/line \d+: CB2 cancels instructions 1 \(our ids\), ours 1, 2$/);
  });

  test("a cancel in the leader's turn (CB2 refuses it) stops the import", () => {
    const game = scriptAfterFirstInstruction().instruction('one').tick().cancel().tick().game();
    expect(() => importCb2Game(game)).toThrow(/line \d+: our engine refuses the cancel by the leader: NOT_FOLLOWER_TURN/);
  });
});
