/**
 * Images for the LLM agent against the stub server: the observation's message carries the seat's
 * frame (a PNG data URL of the asked size and detail) drawn from the seat's own view; the call
 * records keep each image as a file beside them, named and listed by its sha256, never the
 * base64; with images off the request is the one sent before.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ObservationTracker, observationFromView, plainObservation } from '../../shared/agents/observation';
import { FollowerSeatAdapter, LeaderSeatAdapter } from '../../shared/agents/seatAdapter';
import { resolveLlmConfig, type PartialLlmConfig } from '../../shared/agents/node/llm/config';
import { closeSharedFrameRenderer } from '../../shared/agents/node/llm/images';
import { estimatedTokens, IMAGE_TOKENS } from '../../shared/agents/node/llm/rateLimit';
import { readRecords, type CallRecord, type RecordHeader } from '../../shared/agents/node/llm/records';
import { startLlmFollower, startLlmLeader, type LlmFollower, type LlmLeader } from '../../shared/agents/node/llm/seats';
import { loadTemplate, parseTemplate } from '../../shared/agents/node/llm/templates';
import { emptyMemory, playerView, remember, type PlayerView } from '../../shared/engine/playerView';
import type { Card } from '../../shared/engine/cards';
import type { GameState, Role } from '../../shared/engine/state';
import { frameView } from '../../shared/frames/frame';
import { startArmAgent } from '../../server/study/armAgents';
import { card, makeState } from '../fixtures';
import { endTurn, play, say } from '../engine/helpers';
import { imagesOf, messageText, startStubLlm, STUB_MODEL, type StubLlm, type StubReply } from '../helpers/stubLlm';
import { expectGolden } from './golden';

jest.setTimeout(120_000);

let stub: StubLlm;
let dir: string;
const agents: (LlmFollower | LlmLeader)[] = [];

beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'llm-images-'))));
afterEach(async () => {
  for (const agent of agents.splice(0)) agent.close();
  await stub?.close();
  rmSync(dir, { recursive: true, force: true });
});
afterAll(() => closeSharedFrameRenderer());

/** A request's messages as sent: a message with an image has parts. */
interface SentMessage {
  readonly role: string;
  readonly content: string | readonly { type: string; text?: string; image_url?: { url: string; detail: string } }[];
}

const sent = (n: number) => (stub.chatRequests()[n].body as { messages: SentMessage[] }).messages;

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** A PNG's width and height, from its IHDR chunk (the PNG signature checked). */
function pngSize(bytes: Buffer): { width: number; height: number } {
  expect(bytes.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  expect(bytes.toString('latin1', 12, 16)).toBe('IHDR');
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
}

/** The image part of the request's last message: its detail and the PNG its data URL holds. */
function imageOf(messages: readonly SentMessage[]): { detail: string; png: Buffer } {
  const content = messages[messages.length - 1].content;
  expect(Array.isArray(content)).toBe(true);
  const [text, image] = content as Exclude<SentMessage['content'], string>;
  expect(text.type).toBe('text');
  expect(image.type).toBe('image_url');
  expect(image.image_url!.url).toMatch(/^data:image\/png;base64,[A-Za-z0-9+/=]+$/);
  return imagesOf({ messages: [messages[messages.length - 1]] })[0];
}

/** The view of `role` in `state`, remembering the start. */
function viewOf(state: GameState, role: Role, start = state): PlayerView {
  return playerView(state, role, remember(remember(emptyMemory(role), start), state));
}

/** The follower's turn of the fixture (`cards` on the map, the default's when absent): "pick up the 3 green cubes". */
function followerTurn(cards?: Card[]): { start: GameState; state: GameState } {
  const start = makeState({ cards, config: { followerSteps: 30 } });
  return { start, state: play(start, say('pick up the 3 green cubes'), endTurn).state };
}

async function llm<R extends Role>(role: R, replies: readonly StubReply[], config: PartialLlmConfig = {}): Promise<R extends 'leader' ? LlmLeader : LlmFollower> {
  stub.script(replies);
  const options = { config: resolveLlmConfig({ baseUrl: stub.url, model: STUB_MODEL, seed: 7, ...config }), recordDir: dir, env: {}, retryBaseMs: 1 };
  const agent = role === 'leader' ? await startLlmLeader(options) : await startLlmFollower(options);
  agents.push(agent);
  agent.reset({ episodeId: 'game-1' });
  return agent as R extends 'leader' ? LlmLeader : LlmFollower;
}

function records(role: Role = 'follower'): { header: RecordHeader; calls: CallRecord[]; text: string } {
  const file = join(dir, `game-1.${role}.llm.ndjson`);
  const [header, ...calls] = readRecords(file);
  return { header: header as RecordHeader, calls: calls as CallRecord[], text: readFileSync(file, 'utf8') };
}

describe('the LLM agent with images', () => {
  beforeEach(async () => {
    stub = await startStubLlm();
  });

  test("the follower's observation message carries its frame after the text: a PNG data URL of the asked size and detail; the records keep the file and its sha256, never the base64", async () => {
    const agent = await llm('follower', ['{"actions": ["MF", "DONE"]}'], { images: true, imageSize: { width: 160, height: 120 }, imageDetail: 'low' });
    const { start, state } = followerTurn();
    const view = viewOf(state, 'follower', start);
    expect(await agent.act(observationFromView(view), { event: 3, frame: () => frameView(view) })).toEqual(['MF', 'DONE']);

    const messages = sent(0);
    const { detail, png } = imageOf(messages);
    expect(detail).toBe('low');
    expect(pngSize(png)).toEqual({ width: 160, height: 120 });
    // The text is the observation's message as without images; the system message says what the image shows.
    expect(messageText(messages[1].content)).toMatch(/^You face east\./);
    expect(messages[0].content).toContain(`\n\n${loadTemplate('follower').image}`);

    const { header, calls, text } = records();
    expect(header.settings).toMatchObject({ images: true, imageSize: '160x120', imageDetail: 'low', imageCamera: 'first-person', imageFormat: 'png' });
    const file = `game-1.follower.llm.images/${sha256(png)}.png`;
    expect(calls[0].images).toEqual([{ sha256: sha256(png), file, width: 160, height: 120, camera: 'first-person' }]);
    expect(readFileSync(join(dir, file))).toEqual(png);
    // The request on record is the one sent, the image's data URL replaced by its file.
    const recorded = calls[0].request!.messages as readonly SentMessage[];
    expect((recorded[1].content as Exclude<SentMessage['content'], string>)[1]).toEqual({ type: 'image_url', image_url: { url: file, detail: 'low' } });
    expect({ ...calls[0].request, messages: recorded.slice(0, 1) }).toEqual({ ...(stub.chatRequests()[0].body as object), messages: messages.slice(0, 1) });
    expect(text).not.toContain('base64');
    expect(text).not.toContain(png.toString('base64').slice(0, 40));
  });

  test('images off: the request is byte for byte the one sent before (the golden), and nothing is written beside the records', async () => {
    const agent = await llm('follower', ['{"actions": ["MF", "MF", "MF", "DONE"]}'], { images: false });
    const { start, state } = followerTurn();
    const view = viewOf(state, 'follower', start);
    await agent.act(observationFromView(view), { event: 3, frame: () => frameView(view) });
    expectGolden('follower.json', stub.chatRequests()[0].body);
    expect(readdirSync(dir)).toEqual(['game-1.follower.llm.ndjson']);
    expect(records().calls[0].images).toBeUndefined();
    expect(Object.keys(records().header.settings).filter((key) => key.startsWith('image'))).toEqual([]);
  });

  test('a re-ask sends the same image again (one file), and keep-history carries the earlier calls as text', async () => {
    const agent = await llm('follower', ['not JSON', '{"actions": ["MF"]}', '{"actions": ["MF"]}'], { images: true, imageSize: { width: 96, height: 72 }, keepHistory: true });
    const { start, state } = followerTurn();
    const view = viewOf(state, 'follower', start);
    await agent.act(observationFromView(view), { frame: () => frameView(view) });
    expect(imageOf(sent(1).slice(0, 2)).png).toEqual(imageOf(sent(0)).png);
    await agent.act(observationFromView(view), { frame: () => frameView(view) });
    // The second observation's request: the system message, the first call's messages as text, its own message with its image.
    const third = sent(2);
    expect(third.slice(1, -1).every((message) => typeof message.content === 'string')).toBe(true);
    expect(third.slice(1, -1).map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(imageOf(third).png).toEqual(imageOf(sent(0)).png);
    const { calls } = records();
    expect(calls.map((call) => call.images!.map((image) => image.sha256))).toEqual([[sha256(imageOf(sent(0)).png)], [sha256(imageOf(sent(0)).png)], [sha256(imageOf(sent(0)).png)]]);
    expect(readdirSync(join(dir, 'game-1.follower.llm.images'))).toEqual([`${sha256(imageOf(sent(0)).png)}.png`]);
  });

  test("the image is the seat's own view: a card the follower never saw changes nothing in its image, and the leader's map from above shows it", async () => {
    // The fixture's cards, and the same with the yellow plus at (6, 7), out of the follower's sight, made orange.
    const faces = makeState().cards;
    const recoloured = faces.map((c) => (c.id === 4 ? card(4, c.x, c.y, { color: 'orange', shape: c.shape, count: c.count }) : c));
    const follower = await llm('follower', ['{"actions": ["RR"]}'], { images: true, imageSize: { width: 128, height: 96 } });
    const followerShas: string[] = [];
    const leaderShas: string[] = [];
    for (const [i, cards] of [faces, recoloured].entries()) {
      const { start, state } = followerTurn(cards.map((c) => ({ ...c })));
      const view = viewOf(state, 'follower', start);
      expect(observationFromView(view).visibleCards.some((c) => c.id === 4)).toBe(false);
      follower.reset({ episodeId: `game-${i + 1}` });
      await new FollowerSeatAdapter(follower).next(view);
      followerShas.push(sha256(imageOf(sent(stub.chatRequests().length - 1)).png));
    }
    const leader = await llm('leader', ['{"actions": ["RR"]}'], { images: true, imageSize: { width: 128, height: 96 } });
    for (const [i, cards] of [faces, recoloured].entries()) {
      const state = makeState({ cards: cards.map((c) => ({ ...c })) });
      leader.reset({ episodeId: `game-${i + 1}` });
      await new LeaderSeatAdapter(leader).next(viewOf(state, 'leader'));
      leaderShas.push(sha256(imageOf(sent(stub.chatRequests().length - 1)).png));
    }
    expect(followerShas[0]).toBe(followerShas[1]);
    expect(leaderShas[0]).not.toBe(leaderShas[1]);
    expect(records('leader').calls[0].images![0]).toMatchObject({ width: 128, height: 96, camera: 'overhead' });
  });

  test('a host that gives no view to draw is an error, not a request without its image', async () => {
    const agent = await llm('follower', ['{"actions": ["MF"]}'], { images: true });
    const { start, state } = followerTurn();
    await expect(agent.act(observationFromView(viewOf(state, 'follower', start)))).rejects.toThrow('the llm follower sends images, but its host gave it no view to draw (ActContext.frame)');
    expect(stub.chatRequests()).toEqual([]);
  });

  test("a study arm's images (image keys in its llm settings) are drawn for the arm's seat", async () => {
    const arm = { id: 'seeing', agent: 'llm', weight: 1, llm: { model: STUB_MODEL, 'base-url': stub.url, images: true, 'image-size': '64x48', 'image-detail': 'high' } };
    const seated = await startArmAgent(arm, 'follower', dir);
    stub.script(['{"actions": ["MF"]}']);
    try {
      await seated.agent.reset({ episodeId: 'game-1' });
      const { start, state } = followerTurn();
      await new FollowerSeatAdapter(seated.agent as LlmFollower).next(viewOf(state, 'follower', start));
    } finally {
      await seated.agent.close?.();
    }
    const { detail, png } = imageOf(sent(0));
    expect({ detail, size: pngSize(png) }).toEqual({ detail: 'high', size: { width: 64, height: 48 } });
    expect(records().calls[0].images![0].file).toBe(`game-1.follower.llm.images/${sha256(png)}.png`);
    expect(existsSync(join(dir, records().calls[0].images![0].file))).toBe(true);
  });
});

test("over logs the frame is the follower's view at its observation, from the tracker's memory, whether or not the observation's view was built", () => {
  const { start, state } = followerTurn();
  for (const view of [true, false]) {
    const tracker = new ObservationTracker();
    tracker.observe(start, { view });
    const seen = tracker.lastView();
    const observation = tracker.observe(state, { view });
    const now = tracker.lastView();
    expect(now()).toEqual(viewOf(state, 'follower', start));
    expect(observationFromView(now())).toEqual(plainObservation(observation));
    // Each is the view at its own observation, whatever came after.
    expect(seen()).toEqual(viewOf(start, 'follower'));
  }
});

describe('the image section of a prompt template', () => {
  test('the shipped templates say what each role\'s image shows; {{image}} needs an image section, and one of each is allowed', () => {
    expect(loadTemplate('follower').image).toMatch(/first-person/);
    expect(loadTemplate('leader').image).toMatch(/from above/);
    expect(parseTemplate('--- user ---\n{{observation}}{{image}}\n--- image ---\nYour view.\n', 'follower', 't').image).toBe('Your view.');
    expect(parseTemplate('--- user ---\n{{observation}}\n', 'follower', 't').image).toBeNull();
    expect(() => parseTemplate('--- user ---\n{{observation}}{{image}}\n', 'leader', 't')).toThrow('t: the prompt template uses {{image}} but has no "--- image ---" section saying what the image shows');
    expect(() => parseTemplate('--- user ---\nhi\n--- image ---\na\n--- image ---\nb\n', 'follower', 't')).toThrow('more than one "--- image ---"');
    expect(() => parseTemplate('--- user ---\nhi\n--- image ---\n{{observation}}\n', 'follower', 't')).toThrow('t (image): unknown variable {{observation}}');
  });
});

test('E-61: a request\'s image counts as IMAGE_TOKENS in the estimate a rate limit waits for, not its data URL\'s characters', () => {
  const text = { role: 'user' as const, content: 'four' };
  const image = { type: 'image_url' as const, image_url: { url: `data:image/png;base64,${'A'.repeat(40_000)}`, detail: 'low' as const } };
  const withImage = { role: 'user' as const, content: [{ type: 'text' as const, text: 'four' }, image] };
  expect(estimatedTokens({ messages: [withImage], max_tokens: 10 })).toBe(estimatedTokens({ messages: [text], max_tokens: 10 }) + IMAGE_TOKENS);
});
