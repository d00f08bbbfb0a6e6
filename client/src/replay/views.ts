/** The replay's three ways of looking at the world, and what each shows at one point of the game. */
import type { PlayerView } from '../../../shared/engine/playerView';
import type { Role } from '../../../shared/engine/state';
import type { CameraMode, WorldRenderer } from '../world/WorldRenderer';
import type { WorldScene } from '../world/WorldScene';

export type ViewName = 'leader' | 'follower' | 'topdown';

export const VIEWS: readonly { readonly name: ViewName; readonly label: string; readonly key: string }[] = [
  { name: 'leader', label: 'Leader', key: '1' },
  { name: 'follower', label: 'Follower', key: '2' },
  { name: 'topdown', label: 'Top-down', key: '3' },
];

const CAMERAS: Readonly<Record<ViewName, CameraMode>> = { leader: 'overhead', follower: 'firstPerson', topdown: 'topdown' };

/** Whose knowledge each way of looking shows. */
export const VIEW_ROLES: Readonly<Record<ViewName, Role>> = { leader: 'leader', follower: 'follower', topdown: 'leader' };

export interface Frame {
  /** The player's view at this point (the leader's for the leader's and the top-down views). */
  readonly view: PlayerView;
  /** The event that led here made a set: flash the cards that left and grow the new ones. */
  readonly setMade: boolean;
}

/**
 * Puts one point of the game on screen as `view` shows it, from the player's view alone: the
 * leader's views show the whole map, every card with the leader's marks (selected blue, an invalid
 * selection red) and both players; the follower's shows the cells it had seen, the cards it saw or
 * remembered, and the leader only when in view.
 */
export function showFrame(world: WorldScene, renderer: WorldRenderer, view: ViewName, frame: Frame): void {
  const seen = frame.view;
  world.reveal(seen.map);
  world.setCards({ cards: [...seen.cards, ...seen.rememberedCards], invalid: new Set(seen.invalidCards), setMade: frame.setMade });
  world.setAvatar('leader', seen.leader);
  world.setAvatar('follower', seen.follower);
  renderer.setMode(CAMERAS[view]);
  renderer.setFirstPersonPose(seen.follower);
  renderer.setInset(view === 'leader');
  renderer.requestRender();
}
