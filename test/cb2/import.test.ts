/**
 * Importing real CB2 games: all 20 games of test/fixtures/cb2-logs convert, replay exactly through
 * the engine, and agree with the figures the data's own README gives; every kind of bad input is a
 * clear error naming the file and the line, and leaves the other games alone.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CB2_FILES, importCb2Game, type Cb2Game } from '../../shared/cb2/import';
import { CB2_FIXTURES, cb2FixtureGame } from './fixtureGames';
import { HEADINGS } from '../../shared/engine/hex';
import { recordsOf } from '../../shared/dataset/records';
import { loadRecording } from '../../shared/eval/recording';
import type { LogLine } from '../../shared/log/format';
import { serializeLine } from '../../shared/log/recorder';
import { replay } from '../../shared/log/replay';
import { Oracle } from '../../shared/agents/oracles';
import { describeProfiles } from '../../shared/eval/report';
import { DEFAULT_EVAL_OPTIONS, runEpisode } from '../../shared/eval/runner';

const FIXTURES = CB2_FIXTURES;
const BIN = join(__dirname, '..', '..', 'bin', 'cerealbar.cjs');

/** The games the fixture's README lists, with its figures: instructions sent and done, score, played to the end. */
function readmeTable(): { folder: string; sent: number; done: number; score: number; over: boolean }[] {
  return readFileSync(join(FIXTURES, 'README.md'), 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('| gemini_'))
    .map((line) => {
      const cells = line.split('|').map((cell) => cell.trim());
      const [sent, done] = cells[4].split('/').map(Number);
      return { folder: cells[1], sent, done, score: Number(cells[5]), over: cells[7] === 'yes' };
    });
}

const gameAt = cb2FixtureGame;

const logText = (lines: readonly unknown[]) => lines.map((line) => `${serializeLine(line as never)}\n`).join('');

/** CB2's own last turn state (the leader's copy), read straight from its messages. */
function lastTurnState(messages: string): { score: number; game_over: boolean } {
  const states = messages
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line).message_from_server)
    .filter((message) => message.type === 5);
  return states[states.length - 1].turn_state;
}

describe('importing the 20 real CB2 games', () => {
  const table = readmeTable();

  test('the fixture holds the 20 games its README lists', () => {
    expect(table).toHaveLength(20);
  });

  test.each(table.map((row) => [row.folder, row] as const))('%s converts and replays exactly', (folder, expected) => {
    const game = gameAt(folder);
    // The importer checks every card list, pose and turn state CB2 sent against the engine's.
    const imported = importCb2Game(game);
    const text = logText(imported.lines);
    const replayed = replay(text);
    expect(replayed.usedRecordedCards).toBe(true);
    expect(replayed.end?.score).toBe(replayed.final.score);
    // Independently of the importer: CB2's last turn state, and the data's README.
    const cb2 = lastTurnState(game.messagesFromServer);
    expect(replayed.final.score).toBe(cb2.score);
    expect(replayed.final.gameOver).toBe(cb2.game_over);
    const { game: record } = recordsOf(loadRecording(text));
    expect({ sent: record.num_instructions, done: record.num_completed, score: record.score, over: record.end_reason === 'turns-exhausted' }).toEqual({
      sent: expected.sent,
      done: expected.done,
      score: expected.score,
      over: expected.over,
    });
    expect(replayed.header).toMatchObject({ replacementCards: 'recorded', config: { turnsPerPlayer: 7, walkableHills: true, cardsOnEdge: true, liveFeedback: true, cancelInstructions: true }, meta: { source: 'cb2', profile: 'cb2' } });
  });

  test("the clocks are each role's longest turn; a role that never played keeps the profile's", () => {
    const clock = (folder: string) => replay(logText(importCb2Game(gameAt(folder)).lines)).header.config.turnSeconds;
    expect(clock('gemini_text/bot-sandbox/2024-03-31T13h.39m.07s_5_GAME')).toEqual({ leader: 60, follower: 600 });
    expect(clock('gemini_vision/bot-sandbox/2024-05-12T20h.25m.11s_108_GAME')).toEqual({ leader: 50, follower: 180 });
    // No instruction was ever given: no follower turn to time.
    expect(clock('gemini_text/bot-sandbox/2024-04-06T16h.26m.16s_12_GAME')).toEqual({ leader: 60, follower: 180 });
  });

  test('the maps keep CB2 cliffs as walls, and mountains walkable', () => {
    const header = replay(logText(importCb2Game(gameAt(table[0].folder)).lines)).header;
    expect(header.map.walls!.length).toBeGreaterThanOrEqual(20);
    expect(header.map.terrain.join('')).toMatch(/H/);
  });
});

/** One line of a CB2 message log, as the tests below edit it. */
interface Cb2Entry {
  player_id: number;
  message_from_server: { transmit_time: string; type: number; turn_state?: { turn: number; moves_remaining: number } };
}

// CB2's message types: a card list, a turn state, the tick that ends an update.
const CARDS = 9;
const TURN_STATE = 5;
const TICK = 10;

const entriesOf = (messages: string): Cb2Entry[] =>
  messages
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line));
const textOf = (entries: readonly Cb2Entry[]) => entries.map((entry) => JSON.stringify(entry)).join('\n');
const stampOf = (entry: Cb2Entry) => entry.message_from_server.transmit_time;
const restamped = (entry: Cb2Entry, stamp: string): Cb2Entry => ({ ...entry, message_from_server: { ...entry.message_from_server, transmit_time: stamp } });
const leaderOf = (game: Cb2Game): number => {
  const info = JSON.parse(game.gameInfo.split('\n')[0]);
  return info.ids[info.roles.indexOf(2)];
};

/** A CB2 stamp (naive UTC with microseconds) `ms` later. */
function later(stamp: string, ms: number): string {
  const [seconds, micros] = stamp.split('.');
  const total = Date.parse(`${seconds}Z`) * 1000 + Number(micros) + ms * 1000;
  return `${new Date(Math.floor(total / 1e6) * 1000).toISOString().slice(0, 19)}.${String(total % 1e6).padStart(6, '0')}`;
}

/** A log's lines without their times, to compare what happened in two imports of one game. */
const untimed = (lines: readonly LogLine[]) => lines.map((line) => ('t' in line ? { ...line, t: 0 } : line));

describe('the turn states of one update', () => {
  const table = readmeTable();

  /**
   * Every update of the fixture that sends two turn states, with the second state and the rest of its
   * update stamped 1 ms later, as CB2's clock may stamp them.
   */
  const stampedApart = table.flatMap(({ folder }) => {
    const game = gameAt(folder);
    const entries = entriesOf(game.messagesFromServer);
    const leader = leaderOf(game);
    const leaderCopy = entries.flatMap((entry, index) => (entry.player_id === leader ? [index] : []));
    return leaderCopy.slice(1).flatMap((index, k) => {
      if (entries[leaderCopy[k]].message_from_server.type !== TURN_STATE || entries[index].message_from_server.type !== TURN_STATE) return [];
      const stamp = stampOf(entries[index]);
      const shifted = entries.map((entry, i) => (i >= index && stampOf(entry) === stamp ? restamped(entry, later(stamp, 1)) : entry));
      return [[folder, index + 1, { ...game, messagesFromServer: textOf(shifted) }] as const];
    });
  });

  test('the fixture has 53 updates with two turn states', () => {
    // 20 game starts, 21 sets (before and after the point), 7 game overs (the last round's end, then
    // game over), 5 followers out of moves before the leader's turn.
    expect(stampedApart).toHaveLength(53);
  });

  test.each(stampedApart)('%s, line %d 1 ms later: the game imports as it is', (folder, _line, shifted) => {
    const original = importCb2Game(gameAt(folder));
    const imported = importCb2Game(shifted);
    expect(untimed(imported.lines)).toEqual(untimed(original.lines));
    expect({ score: imported.score, gameOver: imported.gameOver }).toEqual({ score: original.score, gameOver: original.gameOver });
  });

  test.each([0, 1])('two updates, with a tick between, are two even when stamped %d ms apart', (ms) => {
    // A follower's turn that its clock ended with no move made: the state that gave the follower the
    // turn, then (only ticks between) the one that gave it back. Moved up to 0 or 1 ms after the
    // first, with nothing but the first update's tick between, the two must still be two turn ends.
    const folder = 'gemini_text/bot-sandbox/2024-05-08T15h.18m.50s_67_GAME';
    const game = gameAt(folder);
    const entries = entriesOf(game.messagesFromServer);
    const leader = leaderOf(game);
    const states = entries.filter((entry) => entry.player_id === leader && entry.message_from_server.type === TURN_STATE).map((entry) => ({ entry, state: entry.message_from_server.turn_state! }));
    const given = states.findIndex(({ state }, i) => state.turn === 1 && state.moves_remaining === 10 && states[i + 1]?.state.turn === 2);
    const [first, second] = [stampOf(states[given].entry), stampOf(states[given + 1].entry)];
    const between = entries.filter((entry) => entry.player_id === leader && stampOf(entry) > first && stampOf(entry) < second);
    expect(between.every((entry) => entry.message_from_server.type === TICK)).toBe(true);
    const joined = entries
      .filter((entry) => stampOf(entry) <= first || stampOf(entry) >= second)
      // The second update's card list goes too: only the first update's tick is left between the two states.
      .filter((entry) => !(stampOf(entry) === second && entry.message_from_server.type === CARDS))
      .map((entry) => (stampOf(entry) === second ? restamped(entry, later(first, ms)) : entry));
    const leaderCopy = joined.filter((entry) => entry.player_id === leader).map((entry) => `${entry.message_from_server.type}@${stampOf(entry)}`);
    const at = leaderCopy.indexOf(`${TURN_STATE}@${first}`);
    expect(leaderCopy.slice(at, at + 4)).toEqual([`${TURN_STATE}@${first}`, `${TICK}@${first}`, `${TURN_STATE}@${later(first, ms)}`, `${TICK}@${later(first, ms)}`]);

    // The same events (the header's leader clock grows: the next leader turn now starts earlier).
    const imported = importCb2Game({ ...game, messagesFromServer: textOf(joined) });
    expect(untimed(imported.lines.slice(1))).toEqual(untimed(importCb2Game(game).lines.slice(1)));
  });
});

describe('bad CB2 input', () => {
  const folder = 'gemini_text/bot-sandbox/2024-03-31T13h.39m.07s_5_GAME';
  const good = gameAt(folder);
  const file = `${good.name}/${CB2_FILES.messagesFromServer}`;
  const lines = good.messagesFromServer.split('\n');
  const withMessages = (messages: string): Cb2Game => ({ ...good, messagesFromServer: messages });

  test('a truncated file: its last line is cut off', () => {
    const cut = good.messagesFromServer.slice(0, Math.floor(good.messagesFromServer.length / 2));
    const line = cut.split('\n').length;
    expect(() => importCb2Game(withMessages(cut))).toThrow(`${file}: line ${line}: the last line is cut off (a truncated file?)`);
  });

  test('a garbage line in the middle', () => {
    const garbled = [...lines.slice(0, 100), 'garbage {', ...lines.slice(100)].join('\n');
    expect(() => importCb2Game(withMessages(garbled))).toThrow(`${file}: line 101: not JSON: garbage {`);
  });

  test('a missing map', () => {
    const noMap = lines.filter((line) => line.trim() === '' || JSON.parse(line).message_from_server.type !== 1).join('\n');
    expect(() => importCb2Game(withMessages(noMap))).toThrow(`${file}: no message of type 1 to the leader`);
  });

  test('a move onto a blocked side: the wall is on the map, so the recorded move cannot be', () => {
    // The leader's first step, from the imported game: where it stood and which way it went.
    const log = importCb2Game(good).lines;
    const recording = loadRecording(logText(log));
    const index = recording.events.findIndex((event) => event.actor === 'leader' && event.type === 'move' && (event.payload.move === 'MF' || event.payload.move === 'MB'));
    const event = recording.events[index];
    const from = recording.states[index].leader;
    const heading = event.type === 'move' && event.payload.move === 'MF' ? from.heading : HEADINGS[(HEADINGS.indexOf(from.heading) + 3) % 6];
    // Block that side of the start cell in CB2's map (bit i = side towards neighbour i).
    const row = 24 - from.y;
    const walled = lines.map((line) => {
      if (line.trim() === '') return line;
      const entry = JSON.parse(line);
      if (entry.message_from_server.type !== 1) return line;
      for (const tile of entry.message_from_server.map_update.tiles) {
        const { a, r, c } = tile.cell.coord;
        if (c === from.x && 2 * r + a === row) tile.cell.boundary.edges |= 1 << HEADINGS.indexOf(heading);
      }
      return JSON.stringify(entry);
    });
    expect(() => importCb2Game(withMessages(walled.join('\n')))).toThrow(new RegExp(`CB2 moves the leader M[FB] from \\(${from.x}, ${from.y}\\) facing ${from.heading}, which our map blocks`));
  });

  test('the command line: bad games are listed with their reason, the others imported (exit 1)', () => {
    const root = mkdtempSync(join(tmpdir(), 'cb2-import-'));
    const write = (name: string, files: Record<string, string>) => {
      mkdirSync(join(root, name), { recursive: true });
      for (const [file, text] of Object.entries(files)) writeFileSync(join(root, name, file), text);
    };
    // A good game unpacked (plain files), a good one gzipped as shipped, a truncated one, one without game_info.
    write('plain/2024-05-13T10h.28m.38s_128_GAME', { [CB2_FILES.gameInfo]: gameAt('gemini_text/bot-sandbox/2024-05-13T10h.28m.38s_128_GAME').gameInfo, [CB2_FILES.messagesFromServer]: gameAt('gemini_text/bot-sandbox/2024-05-13T10h.28m.38s_128_GAME').messagesFromServer });
    const shipped = join(FIXTURES, 'gemini_vision/bot-sandbox/2024-05-13T21h.50m.12s_130_GAME');
    mkdirSync(join(root, 'gz/2024-05-13T21h.50m.12s_130_GAME'), { recursive: true });
    for (const name of readdirSync(shipped)) writeFileSync(join(root, 'gz/2024-05-13T21h.50m.12s_130_GAME', name), readFileSync(join(shipped, name)));
    write('bad/2024-03-31T13h.39m.07s_5_GAME', { [CB2_FILES.gameInfo]: good.gameInfo, [CB2_FILES.messagesFromServer]: good.messagesFromServer.slice(0, 5000) });
    write('bad/2024-01-01T00h.00m.00s_1_GAME', { [CB2_FILES.messagesFromServer]: good.messagesFromServer });
    const out = join(root, 'out');
    const run = spawnSync(process.execPath, [BIN, 'import', 'cb2', root, '--out', out, '--json'], { encoding: 'utf8', timeout: 120_000 });
    expect(run.status).toBe(1);
    const report = JSON.parse(run.stdout);
    expect(report.imported.map((game: { gameId: string }) => game.gameId).sort()).toEqual(['cb2-2024-05-13T10h.28m.38s_128', 'cb2-2024-05-13T21h.50m.12s_130']);
    expect(report.failed).toEqual([
      { folder: join(root, 'bad/2024-01-01T00h.00m.00s_1_GAME'), error: `2024-01-01T00h.00m.00s_1_GAME/${CB2_FILES.gameInfo}: missing` },
      { folder: join(root, 'bad/2024-03-31T13h.39m.07s_5_GAME'), error: expect.stringMatching(/messages_from_server.jsonl.log: line \d+: the last line is cut off/) },
    ]);
    expect(run.stderr).toContain('not imported:');
    const replayed = spawnSync(process.execPath, [BIN, 'replay', ...readdirSync(out).map((name) => join(out, name))], { encoding: 'utf8' });
    expect(replayed.status).toBe(0);
    expect(replayed.stdout).toMatch(/cb2-2024-05-13T21h.50m.12s_130.jsonl: ok: \d+ events, score 4, ended: turns-exhausted/);
  });
});

describe('evaluation on imported CB2 games', () => {
  test('the oracle follows every recorded instruction through the cb2 rules (mountains, walls), and the report names the profile', async () => {
    const episodes = [];
    for (const { folder } of readmeTable()) {
      const recording = loadRecording(logText(importCb2Game(gameAt(folder)).lines));
      for (let index = 0; index < recording.instructions.length; index++) {
        episodes.push(await runEpisode(new Oracle(), recording, index, { ...DEFAULT_EVAL_OPTIONS, mode: 'cascaded' }));
      }
    }
    expect(episodes).toHaveLength(115);
    expect(episodes.every((episode) => episode.error === null && episode.cascaded!.proportionFollowed === 1)).toBe(true);
    expect(describeProfiles(episodes)).toBe('cb2 (14 games)');
  });
});
