/**
 * A short game the leader can score in by itself, for browser tests that play a whole game: the
 * first seed whose board has a valid set the leader can walk onto within a few moves, found by
 * playing the leader's walk through the engine. The server is started with that seed, so the
 * test's leader page steers to the same cards (by id) with the same planner.
 */
import type { Card } from '../../shared/engine/cards';
import { isValidSet } from '../../shared/engine/cards';
import type { GameConfig } from '../../shared/engine/config';
import { buildWorld } from '../../shared/engine/map';
import { drawSetup, startGame, type GameState } from '../../shared/engine/state';
import { step } from '../../shared/engine/transition';
import { generateMap } from '../../shared/maps/generate';
import { PathPlanner } from '../../shared/nav/pathing';

export interface QuickSet {
  readonly seed: number;
  /** The set's card ids, in the order the leader walks onto them. */
  readonly cardIds: readonly number[];
  /** The leader's moves that make it. */
  readonly moves: number;
}

/** The leader's moves onto `set`'s cards in turn (no turn ends in between), or null when one cannot be reached. */
function walk(state: GameState, planner: PathPlanner, set: readonly Card[]): number | null {
  let moves = 0;
  for (const card of set) {
    while (state.leader.x !== card.x || state.leader.y !== card.y) {
      const move = planner.nextMove(state.cards, state.leader, card);
      if (!move || moves > 30) return null;
      const result = step(state, { type: 'move', actor: 'leader', move });
      if (!result.ok) return null;
      state = result.state;
      moves++;
    }
  }
  return moves;
}

/** The first seed from `from` on with a set the leader makes in at most `maxMoves` moves. */
export function quickSetGame(config: GameConfig, maxMoves: number, from = 1): QuickSet {
  for (let seed = from; seed < from + 500; seed++) {
    const map = generateMap(seed);
    const state = startGame(config, map, drawSetup(config, map, seed));
    const planner = new PathPlanner(buildWorld(map));
    const cards = state.cards;
    let best: QuickSet | null = null;
    for (let i = 0; i < cards.length; i++) {
      for (let j = i + 1; j < cards.length; j++) {
        for (let k = j + 1; k < cards.length; k++) {
          const set = [cards[i], cards[j], cards[k]];
          if (!isValidSet(set)) continue;
          const near = [...set].sort((a, b) => planner.cellsTo(cards, state.leader, a) - planner.cellsTo(cards, state.leader, b));
          // Turns do not matter here: the walk's moves are counted as if one turn had them all.
          const moves = walk({ ...state, turn: { ...state.turn, stepsLeft: 100 } }, planner, near);
          if (moves !== null && moves <= maxMoves && (!best || moves < best.moves)) best = { seed, cardIds: near.map((card) => card.id), moves };
        }
      }
    }
    if (best) return best;
  }
  throw new Error(`no seed from ${from} has a set the leader makes in ${maxMoves} moves`);
}
