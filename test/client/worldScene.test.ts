/**
 * The follower's footing in its first-person view: the hex it stands on and the hex in front of
 * it, marked on the ground of the world its own view gives it, in place of its avatar.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Object3D } from 'three';
import { makeConfig } from '../../shared/engine/config';
import { stepFrom, type Cell, type Pose } from '../../shared/engine/hex';
import { mapSchema } from '../../shared/engine/map';
import { emptyMemory, playerView, remember } from '../../shared/engine/playerView';
import { seedRng } from '../../shared/engine/rng';
import { startGame } from '../../shared/engine/state';
import { cellPosition } from '../../client/src/world/layout';
import { WorldScene } from '../../client/src/world/WorldScene';

const tutorial = mapSchema.parse(JSON.parse(readFileSync(join(__dirname, '../../maps/tutorial.json'), 'utf8')));
const cards = tutorial.cards!.map((card, id) => ({ id, ...card, selected: false }));
const state = startGame(makeConfig({ cardCount: cards.length }), tutorial, { ...tutorial.spawn!, cards, rng: seedRng(1) });
// The follower's first view: the world it knows is only what it has seen.
const view = playerView(state, 'follower', remember(emptyMemory('follower'), state));

const named = (world: WorldScene, name: string): Object3D => world.scene.getObjectByName(name)!;
/** Whether an object is drawn: it and all its parents are visible. */
const drawn = (object: Object3D): boolean => object.visible && (object.parent === null || drawn(object.parent));
const onCell = (object: Object3D, world: WorldScene, cell: Cell) => {
  const centre = cellPosition(cell, world.groundAt(cell));
  expect(object.position.x).toBeCloseTo(centre.x);
  expect(object.position.z).toBeCloseTo(centre.z);
  // On the ground, a little above it.
  expect(object.position.y - centre.y).toBeGreaterThan(0);
  expect(object.position.y - centre.y).toBeLessThan(0.05);
};

test("in first person the follower's avatar gives way to its footing: its own hex and the one in front", () => {
  const world = new WorldScene(view.map);
  world.setAvatar('follower', view.follower);
  world.setAvatar('leader', view.leader);
  const avatar = named(world, 'avatar:follower');
  const here = named(world, 'footing:here');
  const ahead = named(world, 'footing:ahead');
  // As others see it (the leader, the replay's overview): the avatar, no footing.
  expect([drawn(avatar), drawn(here), drawn(ahead)]).toEqual([true, false, false]);

  world.setFirstPerson(true);
  expect([drawn(avatar), drawn(here), drawn(ahead)]).toEqual([false, true, true]);
  onCell(here, world, view.follower);
  const front = stepFrom(view.follower, view.follower.heading);
  expect(front).toEqual({ x: 12, y: 5 });
  onCell(ahead, world, front);
  // The hex in front is one the follower sees: its ground is known (path), not guessed.
  expect(view.map.terrain[front.y][front.x]).toBe('P');

  world.setFirstPerson(false);
  expect([drawn(avatar), drawn(here), drawn(ahead)]).toEqual([true, false, false]);
});

test('the footing follows the follower, and marks no hex in front of it off the map', () => {
  const world = new WorldScene(view.map);
  const turned: Pose = { ...view.follower, heading: 'E' };
  world.setAvatar('follower', turned);
  world.setFirstPerson(true);
  onCell(named(world, 'footing:here'), world, turned);
  onCell(named(world, 'footing:ahead'), world, { x: 13, y: 4 });

  const atEdge: Pose = { x: 24, y: 4, heading: 'E' };
  world.setAvatar('follower', atEdge);
  onCell(named(world, 'footing:here'), world, atEdge);
  expect(drawn(named(world, 'footing:ahead'))).toBe(false);

  // No follower placed: nothing to mark, nothing drawn in either mode.
  world.setAvatar('follower', null);
  world.setFirstPerson(true);
  expect([drawn(named(world, 'avatar:follower')), drawn(named(world, 'footing:here'))]).toEqual([false, false]);
  world.setFirstPerson(false);
  expect(drawn(named(world, 'avatar:follower'))).toBe(false);
});
