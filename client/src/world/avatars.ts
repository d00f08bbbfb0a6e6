/**
 * The two players' avatars, built facing north: the leader a violet figure with a hat, the
 * follower a white and teal robot. Each stands on a coloured ring with an arrow showing its
 * heading, readable from straight above. In the follower's first-person view its avatar is
 * hidden and its footing is drawn instead.
 */
import { CircleGeometry, ConeGeometry, CylinderGeometry, Group, Mesh, MeshBasicMaterial, MeshStandardMaterial, RingGeometry, SphereGeometry } from 'three';
import type { Role } from '../../../shared/engine/state';
import { HEX_RADIUS } from './layout';

export const ROLE_COLOURS: Readonly<Record<Role, string>> = { leader: '#8e44ec', follower: '#12a5a0' };

function mesh(geometry: ConstructorParameters<typeof Mesh>[0], colour: string, x: number, y: number, z: number): Mesh {
  const m = new Mesh(geometry, new MeshStandardMaterial({ color: colour, flatShading: true, roughness: 0.6 }));
  m.position.set(x, y, z);
  return m;
}

export function buildAvatar(role: Role): Group {
  const colour = ROLE_COLOURS[role];
  const group = new Group();
  group.name = `avatar:${role}`;

  const ring = new Mesh(new RingGeometry(0.3, 0.4, 24), new MeshBasicMaterial({ color: colour }));
  ring.rotation.x = -Math.PI / 2;
  ring.position.y = 0.02;
  const arrow = new Mesh(new CircleGeometry(0.16, 3), new MeshBasicMaterial({ color: colour }));
  arrow.rotation.set(-Math.PI / 2, 0, Math.PI / 2);
  arrow.position.set(0, 0.021, -0.46);
  group.add(ring, arrow);

  if (role === 'leader') {
    group.add(mesh(new CylinderGeometry(0.13, 0.2, 0.42, 10), colour, 0, 0.21, 0));
    group.add(mesh(new SphereGeometry(0.13, 12, 8), '#f1c9a5', 0, 0.53, 0));
    group.add(mesh(new ConeGeometry(0.15, 0.22, 10), '#f5c518', 0, 0.72, 0));
    group.add(mesh(new SphereGeometry(0.035, 8, 6), '#222222', -0.05, 0.56, -0.11));
    group.add(mesh(new SphereGeometry(0.035, 8, 6), '#222222', 0.05, 0.56, -0.11));
  } else {
    group.add(mesh(new CylinderGeometry(0.17, 0.17, 0.36, 8), '#f2f4f5', 0, 0.2, 0));
    group.add(mesh(new SphereGeometry(0.15, 10, 8), colour, 0, 0.5, 0));
    group.add(mesh(new CylinderGeometry(0.12, 0.12, 0.05, 10), '#10242a', 0, 0.52, -0.1).rotateX(Math.PI / 2));
    group.add(mesh(new CylinderGeometry(0.012, 0.012, 0.16, 4), '#555555', 0, 0.7, 0));
    group.add(mesh(new SphereGeometry(0.035, 8, 6), '#ff5a36', 0, 0.79, 0));
  }
  return group;
}

/**
 * The follower's footing, for its first-person view: the hex it stands on outlined in its colour
 * and the hex in front of it (where a step forward goes) in white, flat on the ground, so that it
 * sees where it is and how far things are.
 */
export function buildFooting(): { readonly group: Group; readonly here: Mesh; readonly ahead: Mesh } {
  const group = new Group();
  group.name = 'footing';
  const here = hexOutline(ROLE_COLOURS.follower, 0.86);
  here.name = 'footing:here';
  const ahead = hexOutline('#ffffff', 0.88);
  ahead.name = 'footing:ahead';
  group.add(here, ahead);
  return { group, here, ahead };
}

/** A flat hexagonal band inside a cell's edge, from `inner` times the hex's radius outwards. */
function hexOutline(colour: string, inner: number): Mesh {
  // Six segments from 30 degrees: corners to the north and south, as the terrain's hexes.
  const band = new Mesh(new RingGeometry(HEX_RADIUS * inner, HEX_RADIUS * 0.97, 6, 1, Math.PI / 6), new MeshBasicMaterial({ color: colour }));
  band.rotation.x = -Math.PI / 2;
  return band;
}
