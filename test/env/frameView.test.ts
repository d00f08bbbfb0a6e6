/**
 * The environment server's frameView op (what the Python package's frames draw): the follower
 * env's answer is frameView of the follower's playerView with its memory of the episode, equal to
 * what its observation was built from; the leader env's is frameView of the leader's view; and a
 * follower's frame view holds nothing it does not know (a card outside its view and memory can
 * change without changing a byte of it).
 */
import { FOLLOWER_CODES } from '../../shared/engine/actions';
import { COLORS, SHAPES, type Card } from '../../shared/engine/cards';
import { DEFAULT_CONFIG } from '../../shared/engine/config';
import type { GameState } from '../../shared/engine/state';
import { FollowerEnv } from '../../shared/env/env';
import { LeaderEnv } from '../../shared/env/leaderEnv';
import { ANSWER_HEADER_BYTES, EnvServer, OPS, STATUS } from '../../shared/env/server';
import { concat } from '../../shared/env/wire';
import { loadRecording, type Recording } from '../../shared/eval/recording';
import { frameRequestSchema, frameView, type FrameView } from '../../shared/frames/frame';
import type { FollowerObservation } from '../../shared/agents/types';
import { serializeLine } from '../../shared/log/recorder';
import type { LogLine } from '../../shared/log/format';
import { generateMap } from '../../shared/maps/generate';
import { playSelfPlayGame } from '../../shared/selfplay/game';

const utf8 = new TextEncoder();
const text = new TextDecoder();

const u32 = (value: number) => {
  const bytes = new Uint8Array(4);
  new DataView(bytes.buffer).setUint32(0, value, true);
  return bytes;
};

function ask(server: EnvServer, ...fields: (number[] | Uint8Array | object)[]): { status: number; payload: string } {
  const request = concat(fields.map((field) => (Array.isArray(field) ? new Uint8Array(field) : field instanceof Uint8Array ? field : utf8.encode(JSON.stringify(field)))));
  const answer = concat(server.handle(request));
  return { status: answer[4], payload: text.decode(answer.subarray(ANSWER_HEADER_BYTES)) };
}

function ok(answer: { status: number; payload: string }): string {
  expect([answer.status, answer.payload.slice(0, 200)]).toEqual([STATUS.ok, expect.anything()]);
  return answer.payload;
}

/** The env's frame view as the server sends it: JSON text. */
function frameViewText(server: EnvServer, env: number): string {
  return ok(ask(server, [OPS.frameView], u32(env)));
}

function make(server: EnvServer, options: object): number {
  return JSON.parse(ok(ask(server, [OPS.make], options))).env;
}

/** The frame view a follower's observation gives: built from the observation's own view fields. */
function observedFrameView(observation: FollowerObservation): FrameView {
  return {
    role: 'follower',
    view: DEFAULT_CONFIG.view,
    map: observation.map,
    cards: observation.visibleCards,
    rememberedCards: observation.rememberedCards,
    invalidCards: [],
    leader: observation.leader,
    follower: observation.pose,
  };
}

/** The frame view's JSON is a valid frame request's view. */
function expectDrawable(view: FrameView): void {
  const parsed = frameRequestSchema.safeParse({ world: 'w', view, camera: 'first-person', size: { width: 8, height: 8 }, format: 'rgb' });
  expect(parsed.success ? 'valid' : parsed.error.issues).toBe('valid');
}

function selfPlayRecording(seed: number): Recording {
  const lines: LogLine[] = [];
  playSelfPlayGame({ seed, map: generateMap(seed) }, (line) => lines.push(line));
  return loadRecording(lines.map((line) => `${serializeLine(line)}\n`).join(''));
}

/** `recording` with card `id` given another face in every state: the same game but for that card. */
function withCardChanged(recording: Recording, id: number): Recording {
  const other = (card: Card): Card => ({
    ...card,
    color: COLORS[(COLORS.indexOf(card.color) + 1) % COLORS.length],
    shape: SHAPES[(SHAPES.indexOf(card.shape) + 1) % SHAPES.length],
  });
  const states = recording.states.map((state): GameState => ({ ...state, cards: state.cards.map((card) => (card.id === id ? other(card) : card)) }));
  return { ...recording, states };
}

/** The ids of the cards the follower's view holds (in view or remembered). */
function knownCards(view: FrameView): Set<number> {
  return new Set([...view.cards, ...view.rememberedCards].map((card) => card.id));
}

describe("the environment server's frame views", () => {
  test("follower: frameView of the follower's playerView with its memory, the view its observation was built from, at every step", () => {
    const server = new EnvServer(() => {
      throw new Error('no logs here');
    });
    const env = make(server, { role: 'follower', description: false });
    for (const seed of [2, 5]) {
      const reference = new FollowerEnv();
      let observation = reference.reset({ seed }).observation;
      ok(ask(server, [OPS.reset], u32(env), { seed }));
      let remembered = 0;
      for (let t = 0; ; t++) {
        const answer = frameViewText(server, env);
        const view: FrameView = JSON.parse(answer);
        expect(answer).toBe(JSON.stringify(frameView(reference.followerView()!)));
        expect(view).toEqual(JSON.parse(JSON.stringify(observedFrameView(observation))));
        expect(view.role).toBe('follower');
        expect(view.invalidCards).toEqual([]);
        if (t % 20 === 0) expectDrawable(view);
        remembered = Math.max(remembered, view.rememberedCards.length);
        if (t === 120) break;
        // Turn and walk, so that cards leave the view and are remembered.
        const action = t % 6 === 5 ? 3 : t % 17 === 16 ? 4 : 0;
        const step = reference.step(FOLLOWER_CODES[action]);
        ok(ask(server, [OPS.step], u32(env), [action]));
        observation = step.observation;
        if (step.terminated || step.truncated) break;
      }
      expect(remembered).toBeGreaterThan(0);
    }
  });

  test("leader: frameView of the leader's view (the whole map, every card, both players)", () => {
    const server = new EnvServer(() => {
      throw new Error('no logs here');
    });
    const env = make(server, { role: 'leader' });
    const reference = new LeaderEnv();
    let view = reference.reset({ seed: 3 }).view;
    ok(ask(server, [OPS.reset], u32(env), { seed: 3 }));
    for (const action of [[0], [2], [5, ...u32(utf8.encode('get the 2 red stars').length), ...utf8.encode('get the 2 red stars')], [4], [1]]) {
      const answer = frameViewText(server, env);
      expect(answer).toBe(JSON.stringify(frameView(view)));
      const parsed: FrameView = JSON.parse(answer);
      expect([parsed.role, parsed.map.terrain.join('').includes('?'), parsed.cards.length, parsed.leader]).toEqual(['leader', false, view.cards.length, view.leader]);
      expectDrawable(parsed);
      ok(ask(server, [OPS.step], u32(env), action));
      view = reference.step(action[0] === 5 ? { instruction: 'get the 2 red stars' } : (['MF', 'MB', 'RL', 'RR', 'END'] as const)[action[0]]).view;
    }
  });

  test("a follower's frame view holds nothing outside what it knows: a card it has not seen changes nothing in it, one in view does", () => {
    const recording = selfPlayRecording(1);
    const probe = new FollowerEnv();
    probe.reset({ log: recording, instruction: 0 });
    const start = probe.followerView()!;
    const known = knownCards(frameView(start));
    const state = recording.states[recording.instructions[0].start];
    const unseen = state.cards.find((card) => !known.has(card.id))!;
    const seen = state.cards.find((card) => known.has(card.id))!;
    expect([unseen, seen]).toEqual([expect.anything(), expect.anything()]);

    const recordings: Record<string, Recording> = { original: recording, unseen: withCardChanged(recording, unseen.id), seen: withCardChanged(recording, seen.id) };
    const server = new EnvServer((path) => recordings[path]);
    const envs = Object.fromEntries(Object.keys(recordings).map((name) => [name, make(server, { role: 'follower', logs: [name], description: false })]));
    for (const env of Object.values(envs)) ok(ask(server, [OPS.reset], u32(env), { episode: 0 }));
    expect(frameViewText(server, envs.seen)).not.toBe(frameViewText(server, envs.original));

    // Both play the same moves while the card stays unknown: their frame views are the same bytes.
    let compared = 0;
    for (let t = 0; t < 60; t++) {
      const original = frameViewText(server, envs.original);
      if (knownCards(JSON.parse(original)).has(unseen.id)) break;
      expect(frameViewText(server, envs.unseen)).toBe(original);
      compared++;
      const action = [0, 0, 2, 0, 3, 0][t % 6];
      const answers = [envs.original, envs.unseen].map((env) => ask(server, [OPS.step], u32(env), [action]));
      if (answers.some((answer) => answer.status !== STATUS.ok)) break;
    }
    expect(compared).toBeGreaterThan(1);
  });

  test('a frame view is refused before a reset, for the two-player and observer environments, and for an unknown env', () => {
    const server = new EnvServer(() => {
      throw new Error('no logs here');
    });
    const error = (env: number) => {
      const answer = ask(server, [OPS.frameView], u32(env));
      expect(answer.status).toBe(STATUS.error);
      return JSON.parse(answer.payload) as { kind: string; message: string };
    };
    for (const role of ['follower', 'leader']) expect(error(make(server, { role }))).toEqual({ kind: 'episode-over', message: 'nothing to draw yet: call reset() first' });
    for (const role of ['both', 'observer']) expect(error(make(server, { role }))).toEqual({ kind: 'invalid', message: 'only follower and leader environments have frames' });
    expect(error(999).message).toMatch(/no environment 999/);
    const env = make(server, { role: 'follower' });
    ok(ask(server, [OPS.reset], u32(env), { seed: 2 }));
    const extra = ask(server, [OPS.frameView], u32(env), [0]);
    expect([extra.status, JSON.parse(extra.payload).message]).toEqual([STATUS.error, 'the request has 1 bytes too many']);
  });
});
