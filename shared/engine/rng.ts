/**
 * The game's only source of randomness: a seeded xoroshiro128+ generator from pure-rand.
 * Its state is a plain array of numbers kept in the game state, so a state can be copied,
 * logged and resumed; a Draw advances a copy and hands back the new state.
 */
import { xoroshiro128plus, xoroshiro128plusFromState } from 'pure-rand/generator/xoroshiro128plus';
import { uniformInt } from 'pure-rand/distribution/uniformInt';

export type RngState = readonly number[];

export function seedRng(seed: number): RngState {
  return xoroshiro128plus(seed).getState();
}

export class Draw {
  private readonly generator;

  constructor(state: RngState) {
    this.generator = xoroshiro128plusFromState(state);
  }

  /** An integer in [from, to], both included. */
  int(from: number, to: number): number {
    return uniformInt(this.generator, from, to);
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('cannot pick from an empty list');
    return items[this.int(0, items.length - 1)];
  }

  chance(probability: number): boolean {
    return this.int(0, 999_999) < probability * 1_000_000;
  }

  /** A new array with the items in random order (Fisher-Yates). */
  shuffled<T>(items: readonly T[]): T[] {
    const out = items.slice();
    for (let i = out.length - 1; i > 0; i--) {
      const j = this.int(0, i);
      [out[i], out[j]] = [out[j], out[i]];
    }
    return out;
  }

  state(): RngState {
    return this.generator.getState();
  }
}
