/** What a frame request is and which points of a game are drawn (shared/frames): pure, no browser. */
import { frameRequestSchema, frameView, parseFrameSize, MAX_FRAME_SIDE } from '../../shared/frames/frame';
import { framePoints, instructionStarts, playerViews } from '../../shared/frames/views';
import { emptyMemory, playerView, remember } from '../../shared/engine/playerView';
import { selfPlayStates } from '../fixtures';
import { tutorialState, viewOf } from './tutorial';

describe('frameView', () => {
  test("holds the drawn part of a player's view and nothing else of it", () => {
    const view = viewOf(tutorialState(), 'follower');
    const drawn = frameView(view);
    expect(Object.keys(drawn).sort()).toEqual(['cards', 'follower', 'invalidCards', 'leader', 'map', 'rememberedCards', 'role', 'view']);
    expect(drawn.cards).toBe(view.cards);
    expect(drawn.map).toBe(view.map);
    expect(drawn.view).toEqual(view.config.view);
  });

  test('a frame request of a real view passes the schema', () => {
    for (const role of ['leader', 'follower'] as const) {
      const request = { world: 'w', view: frameView(viewOf(tutorialState(), role)), camera: 'first-person', size: { width: 320, height: 240 }, format: 'rgb' };
      expect(frameRequestSchema.safeParse(JSON.parse(JSON.stringify(request))).success).toBe(true);
    }
  });

  test.each([
    ['a heading that is not one of the six', (r: any) => (r.view.follower.heading = 'N'), 'view.follower.heading'],
    ['a size of 0', (r: any) => (r.size.width = 0), 'size.width'],
    ['a size beyond the largest', (r: any) => (r.size.height = MAX_FRAME_SIDE + 1), 'size.height'],
    ['an unknown camera', (r: any) => (r.camera = 'fisheye'), 'camera'],
    ['an unknown format', (r: any) => (r.format = 'gif'), 'format'],
    ['terrain rows of the wrong length', (r: any) => (r.view.map.terrain[0] += 'G'), 'view.map'],
    ['an unknown terrain letter', (r: any) => (r.view.map.terrain[0] = 'X'.repeat(r.view.map.width)), 'view.map.terrain.0'],
    ['a card of an unknown colour', (r: any) => (r.view.cards[0].color = 'purple'), 'view.cards.0.color'],
  ])('refuses %s, naming where', (_what, spoil, path) => {
    const request = JSON.parse(JSON.stringify({ world: 'w', view: frameView(viewOf(tutorialState(), 'leader')), camera: 'overhead', size: { width: 32, height: 32 }, format: 'png' }));
    spoil(request);
    const parsed = frameRequestSchema.safeParse(request);
    expect(parsed.success).toBe(false);
    expect(parsed.error!.issues[0].path.join('.')).toBe(path);
  });
});

describe('parseFrameSize', () => {
  test('reads WIDTHxHEIGHT', () => expect(parseFrameSize('320x240')).toEqual({ width: 320, height: 240 }));
  test.each(['320', '320x', 'x240', '320X240', '-1x5', '0x10', '10x0', `${MAX_FRAME_SIDE + 1}x10`, '3.5x2'])('refuses "%s" with a message', (text) => {
    expect(parseFrameSize(text)).toEqual({ problem: expect.stringMatching(/frame/) });
  });
});

describe('the points of a game to draw', () => {
  const states = selfPlayStates(3);

  test("playerViews gives each wanted state's view with the memory of every state before it", () => {
    const wanted = [0, 5, states.length - 1];
    const views = playerViews(states, 'follower', (i) => wanted.includes(i));
    let memory = emptyMemory('follower');
    states.forEach((state, i) => {
      memory = remember(memory, state);
      expect(views[i]).toEqual(wanted.includes(i) ? playerView(state, 'follower', memory) : undefined);
    });
  });

  test('instructions: the first state in which the follower may see each instruction as its current one', () => {
    const starts = instructionStarts(states);
    expect(starts.length).toBeGreaterThan(1);
    const views = playerViews(states, 'follower');
    for (const start of starts) {
      const current = views[start]!.instructions.find((instruction) => instruction.status === 'current');
      expect(current).toBeDefined();
      const before = views[start - 1]?.instructions.find((instruction) => instruction.status === 'current');
      expect(before?.text === current!.text && before?.id === current!.id).toBe(false);
    }
  });

  test('start, steps and seqs', () => {
    expect(framePoints(states, 'start')).toEqual([0]);
    expect(framePoints(states, 'steps')).toEqual(states.map((_, i) => i));
    expect(framePoints(states, [7, 0, 7, 3])).toEqual([0, 3, 7]);
    expect(framePoints(states, [states.length])).toEqual({ problem: `seq ${states.length} is not an event of this game (its events are 1 to ${states.length - 1}; 0 is the start)` });
  });
});
