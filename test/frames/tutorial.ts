/** The tutorial map's own start (its fixed poses and cards), and each role's view of a state, for frame tests. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeConfig } from '../../shared/engine/config';
import { mapSchema } from '../../shared/engine/map';
import { emptyMemory, playerView, remember, type PlayerView } from '../../shared/engine/playerView';
import { seedRng } from '../../shared/engine/rng';
import { startGame, type GameState, type Role } from '../../shared/engine/state';

const MAP = mapSchema.parse(JSON.parse(readFileSync(join(__dirname, '../../maps/tutorial.json'), 'utf8')));

export function tutorialState(): GameState {
  const cards = (MAP.cards ?? []).map((card, id) => ({ id, ...card, selected: false }));
  return startGame(makeConfig({ turnsPerPlayer: 30, cardCount: cards.length }), MAP, { ...MAP.spawn!, cards, rng: seedRng(1) });
}

/** A role's view of `state` with the memory of `state` alone. */
export function viewOf(state: GameState, role: Role): PlayerView {
  return playerView(state, role, remember(emptyMemory(role), state));
}
