/** The replay's three ways of looking at the world, and what each shows at one point of the game. */
import type { PlayerView } from '../../../shared/engine/playerView';
import type { Role } from '../../../shared/engine/state';
import type { CameraMode, WorldRenderer } from '../world/WorldRenderer';
import { showView } from '../world/showView';
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

/** Puts one point of the game on screen as `view` shows it, from the player's view alone (`showView`). */
export function showFrame(world: WorldScene, renderer: WorldRenderer, view: ViewName, frame: Frame): void {
  renderer.setMode(CAMERAS[view]);
  renderer.setInset(view === 'leader');
  showView(world, renderer, frame.view, frame.setMade);
}
