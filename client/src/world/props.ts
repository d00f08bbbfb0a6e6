/**
 * Props built from three's primitives: trees, huts, houses, windmills, towers, tents, lamps and
 * plants, low-poly and readable from above and from the ground. `variant` picks the look.
 */
import {
  BoxGeometry,
  ConeGeometry,
  CylinderGeometry,
  DodecahedronGeometry,
  Group,
  IcosahedronGeometry,
  Mesh,
  MeshStandardMaterial,
  SphereGeometry,
  type BufferGeometry,
} from 'three';
import { mergeGeometries } from 'three/examples/jsm/utils/BufferGeometryUtils.js';
import type { Prop } from '../../../shared/engine/map';
import { cellNoise, cellPosition, headingRotation } from './layout';

const materials = new Map<string, MeshStandardMaterial>();
function material(colour: string, emissive = false): MeshStandardMaterial {
  const key = `${colour}${emissive ? '*' : ''}`;
  let m = materials.get(key);
  if (!m) {
    m = new MeshStandardMaterial({ color: colour, flatShading: true, roughness: 0.85, ...(emissive && { emissive: colour, emissiveIntensity: 0.8 }) });
    materials.set(key, m);
  }
  return m;
}

function part(geometry: BufferGeometry, colour: string, x: number, y: number, z: number, emissive = false): Mesh {
  const mesh = new Mesh(geometry, material(colour, emissive));
  mesh.position.set(x, y, z);
  return mesh;
}

const TRUNK = '#7a5230';
/** Foliage colour and shape per tree variant. */
const TREES: Readonly<Record<string, { colour: string; crown: 'cone' | 'round' | 'palm' | 'none'; tall?: boolean }>> = {
  pine: { colour: '#2f7d3a', crown: 'cone', tall: true },
  fir: { colour: '#276b3b', crown: 'cone' },
  spruce: { colour: '#1f5e44', crown: 'cone', tall: true },
  cypress: { colour: '#3d7a2a', crown: 'cone', tall: true },
  oak: { colour: '#4d9a36', crown: 'round' },
  maple: { colour: '#d9622b', crown: 'round' },
  cherry: { colour: '#f2a3c7', crown: 'round' },
  birch: { colour: '#9acd4a', crown: 'round', tall: true },
  willow: { colour: '#7fae4a', crown: 'round' },
  'bush-tree': { colour: '#5a9e3c', crown: 'round' },
  palm: { colour: '#4caf50', crown: 'palm', tall: true },
  'dead-tree': { colour: '#6b5440', crown: 'none' },
};

function tree(variant: string): Group {
  const look = TREES[variant] ?? TREES.oak;
  const group = new Group();
  const height = look.tall ? 0.45 : 0.3;
  group.add(part(new CylinderGeometry(0.05, 0.07, height, 6), variant === 'birch' ? '#e8e4d8' : TRUNK, 0, height / 2, 0));
  if (look.crown === 'cone') {
    group.add(part(new ConeGeometry(0.34, 0.55, 7), look.colour, 0, height + 0.15, 0));
    group.add(part(new ConeGeometry(0.26, 0.45, 7), look.colour, 0, height + 0.42, 0));
  } else if (look.crown === 'round') {
    group.add(part(new IcosahedronGeometry(0.34, 0), look.colour, 0, height + 0.22, 0));
  } else if (look.crown === 'palm') {
    for (let i = 0; i < 5; i++) {
      const leaf = part(new BoxGeometry(0.5, 0.03, 0.12), look.colour, 0, height + 0.05, 0);
      leaf.rotation.set(0, (i * 2 * Math.PI) / 5, -0.35);
      leaf.position.x = Math.cos((i * 2 * Math.PI) / 5) * 0.2;
      leaf.position.z = -Math.sin((i * 2 * Math.PI) / 5) * 0.2;
      group.add(leaf);
    }
  } else {
    const branch = part(new CylinderGeometry(0.025, 0.035, 0.3, 5), TRUNK, 0.08, height + 0.05, 0);
    branch.rotation.z = -0.7;
    group.add(branch);
  }
  return group;
}

const HUT_COLOURS: Readonly<Record<string, string>> = { red: '#c94a3a', blue: '#4a6fc9', yellow: '#e0b93a', green: '#4ea85a', white: '#ece6da' };

function hut(variant: string): Group {
  const group = new Group();
  group.add(part(new CylinderGeometry(0.32, 0.34, 0.35, 8), '#e9dcc0', 0, 0.175, 0));
  group.add(part(new ConeGeometry(0.42, 0.35, 8), HUT_COLOURS[variant] ?? HUT_COLOURS.red, 0, 0.52, 0));
  group.add(part(new BoxGeometry(0.12, 0.2, 0.02), '#5b3a22', 0, 0.1, -0.33));
  return group;
}

function house(): Group {
  const group = new Group();
  group.add(part(new BoxGeometry(0.6, 0.4, 0.5), '#efe2c8', 0, 0.2, 0));
  const roof = part(new CylinderGeometry(0.36, 0.36, 0.62, 3), '#a8452f', 0, 0.5, 0);
  roof.rotation.set(0, 0, Math.PI / 2);
  roof.scale.set(1, 1, 0.9);
  group.add(roof);
  group.add(part(new BoxGeometry(0.12, 0.22, 0.02), '#5b3a22', 0, 0.11, -0.26));
  group.add(part(new BoxGeometry(0.12, 0.1, 0.02), '#8fd0ff', 0.18, 0.25, -0.26));
  return group;
}

function windmill(): Group {
  const group = new Group();
  group.add(part(new CylinderGeometry(0.18, 0.3, 0.8, 8), '#e6dcc8', 0, 0.4, 0));
  group.add(part(new ConeGeometry(0.24, 0.25, 8), '#8a4b2e', 0, 0.92, 0));
  for (let i = 0; i < 4; i++) {
    const blade = part(new BoxGeometry(0.08, 0.5, 0.02), '#f5f0e6', 0, 0.75, -0.24);
    blade.rotation.z = (i * Math.PI) / 2;
    blade.translateY(0.25);
    group.add(blade);
  }
  return group;
}

function tower(): Group {
  const group = new Group();
  group.add(part(new CylinderGeometry(0.22, 0.26, 1.0, 8), '#a9a39a', 0, 0.5, 0));
  group.add(part(new ConeGeometry(0.3, 0.4, 8), '#4a5fa8', 0, 1.2, 0));
  return group;
}

function tent(): Group {
  const group = new Group();
  group.add(part(new ConeGeometry(0.38, 0.5, 4), '#e07b39', 0, 0.25, 0));
  group.add(part(new ConeGeometry(0.12, 0.3, 4), '#3a2a1a', 0, 0.15, -0.2));
  return group;
}

function lamp(): Group {
  const group = new Group();
  group.add(part(new CylinderGeometry(0.03, 0.04, 0.7, 6), '#3b3b46', 0, 0.35, 0));
  group.add(part(new SphereGeometry(0.08, 8, 6), '#ffe28a', 0, 0.74, 0, true));
  return group;
}

const PLANT_COLOURS: Readonly<Record<string, string>> = {
  bush: '#3f8f3a',
  'yellow-bush': '#c8c23a',
  'tall-grass': '#6fae3f',
  'red-flower': '#e23b3b',
  'purple-flower': '#9b4de0',
  'blue-flower': '#3b7be2',
};

function plant(variant: string, seed: number): Group {
  const group = new Group();
  const colour = PLANT_COLOURS[variant] ?? PLANT_COLOURS.bush;
  if (variant.endsWith('flower')) {
    for (let i = 0; i < 4; i++) {
      const angle = i * 1.7 + seed * 6;
      const x = Math.cos(angle) * 0.18;
      const z = Math.sin(angle) * 0.18;
      group.add(part(new CylinderGeometry(0.012, 0.012, 0.22, 4), '#3f8f3a', x, 0.11, z));
      group.add(part(new DodecahedronGeometry(0.06, 0), colour, x, 0.24, z));
    }
  } else if (variant === 'tall-grass') {
    for (let i = 0; i < 5; i++) {
      const blade = part(new ConeGeometry(0.04, 0.35, 4), colour, Math.cos(i * 1.3) * 0.15, 0.17, Math.sin(i * 1.3) * 0.15);
      blade.rotation.z = (i - 2) * 0.12;
      group.add(blade);
    }
  } else {
    group.add(part(new IcosahedronGeometry(0.24, 0), colour, 0, 0.18, 0));
    group.add(part(new IcosahedronGeometry(0.16, 0), colour, 0.16, 0.12, 0.08));
  }
  return group;
}

export function buildProp(prop: Prop, groundHeight: number): Group {
  const seed = cellNoise(prop, 7);
  const builders: Record<Prop['type'], () => Group> = {
    tree: () => tree(prop.variant),
    hut: () => hut(prop.variant),
    house,
    windmill,
    tower,
    tent,
    lamp,
    plant: () => plant(prop.variant, seed),
  };
  const group = builders[prop.type]();
  group.name = `${prop.type}:${prop.variant}`;
  group.position.copy(cellPosition(prop, groundHeight));
  group.rotation.y = headingRotation(prop.rotation);
  // Same kind, slightly different sizes: a grove of one variant should not look stamped.
  group.scale.setScalar(0.9 + seed * 0.2);
  return group;
}

/**
 * Every prop of a map as one mesh per material: the props' parts drawn in a few draw calls instead
 * of one each (hundreds on a map), which is most of a frame's cost in software WebGL. The props
 * never move, so their parts are baked where they stand.
 */
export function buildProps(props: readonly { readonly prop: Prop; readonly groundHeight: number }[]): Group {
  const byMaterial = new Map<MeshStandardMaterial, BufferGeometry[]>();
  for (const { prop, groundHeight } of props) {
    const group = buildProp(prop, groundHeight);
    group.updateMatrixWorld(true);
    group.traverse((object) => {
      const mesh = object as Mesh;
      if (!mesh.isMesh) return;
      // Polyhedra have no index and the other primitives one: merged, all have none.
      const geometry = (mesh.geometry.index ? mesh.geometry.toNonIndexed() : mesh.geometry.clone()).applyMatrix4(mesh.matrixWorld);
      const material = mesh.material as MeshStandardMaterial;
      byMaterial.set(material, [...(byMaterial.get(material) ?? []), geometry]);
      mesh.geometry.dispose();
    });
  }
  const merged = new Group();
  merged.name = 'props';
  for (const [material, geometries] of byMaterial) {
    merged.add(new Mesh(mergeGeometries(geometries), material));
    for (const geometry of geometries) geometry.dispose();
  }
  return merged;
}
