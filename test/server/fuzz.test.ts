/** A small run of the structure-aware fuzzer (bench/fuzz.bench.ts) against a real server. */
import { runFuzz } from '../../bench/fuzz.bench';

jest.setTimeout(120_000);

test('P-35, P-77: 3,000 fuzzed frames: no crash, every refusal changes nothing, the follower always hears the game end, every log replays', async () => {
  const figures = await runFuzz({ frames: 3000, seed: 7 });
  expect(figures.corrupted).toEqual([]);
  expect(figures.crashes).toBe(0);
  expect(figures.frames).toBe(3000);
  // The fuzz reaches the edge's refusals and the engine's, and ends games with each kind of bad frame.
  expect(Object.keys(figures.refusals)).toEqual(expect.arrayContaining(['BAD_MESSAGE', 'UNKNOWN_MESSAGE', 'EMPTY_INSTRUCTION', 'INSTRUCTION_TOO_LONG']));
  expect(Object.keys(figures.closes)).toEqual(expect.arrayContaining(['1007', '1009']));
});
