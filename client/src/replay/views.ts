/** The replay's three ways of looking at the world, and what each shows at one point of the game. */
import { isInvalidSelection } from '../../../shared/engine/cards';
import type { GameState } from '../../../shared/engine/state';
import type { CameraMode, WorldRenderer } from '../world/WorldRenderer';
import type { WorldScene } from '../world/WorldScene';
import type { FollowerSight } from './recording';

export type ViewName = 'leader' | 'follower' | 'topdown';

export const VIEWS: readonly { readonly name: ViewName; readonly label: string; readonly key: string }[] = [
  { name: 'leader', label: 'Leader', key: '1' },
  { name: 'follower', label: 'Follower', key: '2' },
  { name: 'topdown', label: 'Top-down', key: '3' },
];

const CAMERAS: Readonly<Record<ViewName, CameraMode>> = { leader: 'overhead', follower: 'firstPerson', topdown: 'topdown' };

export interface Frame {
  readonly state: GameState;
  readonly sight: FollowerSight;
  /** The event that led here made a set: flash the cards that left and grow the new ones. */
  readonly setMade: boolean;
}

/**
 * Puts one point of the game on screen as `view` shows it. The leader's views show every card with
 * the leader's marks (selected blue, an invalid selection red) and both players; the follower's
 * shows only the cards it sees or remembers, unmarked as invalid, and the leader only when in view.
 */
export function showFrame(world: WorldScene, renderer: WorldRenderer, view: ViewName, frame: Frame): void {
  const { state, sight, setMade } = frame;
  if (view === 'follower') {
    world.setCards({ cards: sight.cards, setMade });
    world.setAvatar('leader', sight.leader);
  } else {
    const selected = state.cards.filter((card) => card.selected);
    const invalid = new Set(isInvalidSelection(selected) ? selected.map((card) => card.id) : []);
    world.setCards({ cards: state.cards, invalid, setMade });
    world.setAvatar('leader', state.leader);
  }
  world.setAvatar('follower', state.follower);
  renderer.setMode(CAMERAS[view]);
  renderer.setFirstPersonPose(state.follower);
  renderer.setInset(view === 'leader');
  renderer.requestRender();
}
