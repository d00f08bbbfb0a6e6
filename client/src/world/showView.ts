/**
 * The one drawing of what a player knows: a player's view put into the world and the renderer's
 * first-person pose. The game's pages, the replay viewer and the frames for models all show a view
 * through it, so that what a model is shown is what the player was shown.
 */
import type { PlayerView } from '../../../shared/engine/playerView';
import type { WorldRenderer } from './WorldRenderer';
import type { WorldScene } from './WorldScene';

/** The parts of a player's view the world draws. */
export type DrawnView = Pick<PlayerView, 'map' | 'cards' | 'rememberedCards' | 'invalidCards' | 'leader' | 'follower'>;

/**
 * The leader's view shows the whole map, every card with the leader's marks (selected blue, an
 * invalid selection red) and both players; the follower's the cells it has seen, the cards it sees
 * or remembers, and the leader only when in view. `setMade`: the change that led here made a set
 * (the cards that left flash, the new ones grow in).
 */
export function showView(world: WorldScene, renderer: WorldRenderer, view: DrawnView, setMade = false): void {
  world.reveal(view.map);
  world.setCards({ cards: [...view.cards, ...view.rememberedCards], invalid: new Set(view.invalidCards), setMade });
  world.setAvatar('leader', view.leader);
  world.setAvatar('follower', view.follower);
  renderer.setFirstPersonPose(view.follower);
  renderer.requestRender();
}
