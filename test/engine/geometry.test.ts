/** Hex geometry, card rules and the follower's view. */
import fc from 'fast-check';
import { neighbourTable } from '../../shared/engine/hex';
import { connectedRegion, largestRegion, walkableSteps } from '../../shared/engine/map';
import {
  HEADINGS,
  allDifferent,
  describeCard,
  cellCentre,
  hasValidSet,
  hexDistance,
  isInvalidSelection,
  isValidSet,
  neighbours,
  opposite,
  rotateLeft,
  rotateRight,
  rotationDistance,
  stepFrom,
  visibleIndices,
  type CardFace,
  type Heading,
} from '../../shared/engine';

const cell = fc.record({ x: fc.integer({ min: -30, max: 30 }), y: fc.integer({ min: -30, max: 30 }) });
const heading = fc.constantFrom(...HEADINGS);

describe('odd-r hex coordinates', () => {
  test("R-11: the original's neighbour rule, for even and odd rows", () => {
    expect(neighbours({ x: 5, y: 4 })).toEqual([
      { x: 5, y: 5 }, { x: 6, y: 4 }, { x: 5, y: 3 }, { x: 4, y: 3 }, { x: 4, y: 4 }, { x: 4, y: 5 },
    ]);
    expect(neighbours({ x: 5, y: 5 })).toEqual([
      { x: 6, y: 6 }, { x: 6, y: 5 }, { x: 6, y: 4 }, { x: 5, y: 4 }, { x: 4, y: 5 }, { x: 5, y: 6 },
    ]);
  });

  test('R-10: every neighbour is one step away and at unit distance between centres', () => {
    fc.assert(
      fc.property(cell, (c) => {
        for (const n of neighbours(c)) {
          expect(hexDistance(c, n)).toBe(1);
          const a = cellCentre(c);
          const b = cellCentre(n);
          expect(Math.hypot(a.x - b.x, a.z - b.z)).toBeCloseTo(1, 9);
        }
      }),
    );
  });

  test('a step forward then a step back returns to the start', () => {
    fc.assert(fc.property(cell, heading, (c, h) => expect(stepFrom(stepFrom(c, h), opposite(h))).toEqual(c)));
  });

  test('hex distance is a metric consistent with steps', () => {
    fc.assert(
      fc.property(cell, cell, fc.array(heading, { maxLength: 12 }), (a, b, path) => {
        expect(hexDistance(a, b)).toBe(hexDistance(b, a));
        expect(hexDistance(a, a)).toBe(0);
        const end = path.reduce(stepFrom, a);
        expect(hexDistance(a, end)).toBeLessThanOrEqual(path.length);
      }),
    );
  });

  test('R-12: rotations: RR is clockwise, RL counter-clockwise, six make a full circle', () => {
    expect(rotateRight('NE')).toBe('E');
    expect(rotateLeft('NE')).toBe('NW');
    fc.assert(
      fc.property(heading, (h) => {
        let r: Heading = h;
        for (let i = 0; i < 6; i++) r = rotateRight(r);
        expect(r).toBe(h);
        expect(rotateLeft(rotateRight(h))).toBe(h);
        expect(rotationDistance(h, opposite(h))).toBe(3);
      }),
    );
  });
});

describe('card rules', () => {
  const a: CardFace = { color: 'red', shape: 'star', count: 1 };
  const b: CardFace = { color: 'blue', shape: 'heart', count: 2 };
  const c: CardFace = { color: 'green', shape: 'cube', count: 3 };

  test('R-18: a valid set has exactly three cards with every property different', () => {
    expect(isValidSet([a, b, c])).toBe(true);
    expect(isValidSet([a, b])).toBe(false);
    expect(isValidSet([a, b, { ...c, color: 'red' }])).toBe(false);
    expect(isValidSet([a, b, { ...c, shape: 'heart' }])).toBe(false);
    expect(isValidSet([a, b, { ...c, count: 1 }])).toBe(false);
  });

  test('R-19: invalid selections: a repeated property, or more than three cards', () => {
    expect(isInvalidSelection([])).toBe(false);
    expect(isInvalidSelection([a, b])).toBe(false);
    expect(isInvalidSelection([a, { ...b, count: 1 }])).toBe(true);
    expect(isInvalidSelection([a, b, c])).toBe(false);
    expect(isInvalidSelection([a, b, c, { color: 'black', shape: 'plus', count: 2 }])).toBe(true);
  });

  test('hasValidSet finds a set anywhere on the board', () => {
    expect(hasValidSet([a, { ...a, count: 2 }, b, c])).toBe(true);
    expect(hasValidSet([a, { ...b, color: 'red' }, c])).toBe(false);
    expect(allDifferent([a])).toBe(true);
  });

  test('cards are described in words, with plurals, by the names of what they draw', () => {
    expect(describeCard(a)).toBe('1 red star');
    expect(describeCard({ color: 'blue', shape: 'torus', count: 3 })).toBe('3 blue circles');
    expect(describeCard({ color: 'pink', shape: 'plus', count: 2 })).toBe('2 pink crosses');
    expect(describeCard({ color: 'green', shape: 'cube', count: 1 })).toBe('1 green cube');
  });
});

describe("R-51: the follower's view", () => {
  const dims = { width: 25, height: 25 };
  const view = { fovDegrees: 120, range: 5 };
  const at = (x: number, y: number) => y * 25 + x;

  test('sees its own cell and the cells straight ahead up to the range, not beyond', () => {
    const cells = visibleIndices(dims, { x: 12, y: 12, heading: 'E' }, view);
    expect(cells).toContain(at(12, 12));
    for (let d = 1; d <= 5; d++) expect(cells).toContain(at(12 + d, 12));
    expect(cells).not.toContain(at(18, 12));
  });

  test('never sees behind or beside itself with a 120 degree cone', () => {
    const cells = visibleIndices(dims, { x: 12, y: 12, heading: 'E' }, view);
    expect(cells).not.toContain(at(11, 12));
    expect(cells).not.toContain(at(11, 13));
    expect(cells).not.toContain(at(11, 11));
  });

  test('the cone edges: the NE and SE neighbours are exactly 60 degrees off and are seen', () => {
    const cells = visibleIndices(dims, { x: 12, y: 12, heading: 'E' }, view);
    expect(cells).toContain(at(12, 13));
    expect(cells).toContain(at(12, 11));
  });

  test('a narrower cone sees fewer cells, a full circle sees the whole disc', () => {
    const pose = { x: 12, y: 12, heading: 'NW' as const };
    const narrow = visibleIndices(dims, pose, { fovDegrees: 60, range: 5 });
    const wide = visibleIndices(dims, pose, view);
    expect(narrow.length).toBeLessThan(wide.length);
    expect(narrow.every((c) => wide.includes(c))).toBe(true);
    expect(visibleIndices(dims, pose, { fovDegrees: 360, range: 5 })).toHaveLength(91);
  });

  test('is clipped at the map edge and is the same for the same pose', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 24 }), fc.integer({ min: 0, max: 24 }), heading, (x, y, h) => {
        const cells = visibleIndices(dims, { x, y, heading: h }, view);
        expect(cells.every((c) => c >= 0 && c < 625)).toBe(true);
        expect(new Set(cells).size).toBe(cells.length);
        expect(visibleIndices(dims, { x, y, heading: h }, view)).toEqual(cells);
      }),
    );
  });

  test('rotating the follower by 180 degrees shows a disjoint cone (besides its own cell)', () => {
    const e = visibleIndices(dims, { x: 12, y: 12, heading: 'E' }, view);
    const w = visibleIndices(dims, { x: 12, y: 12, heading: 'W' }, view);
    expect(e.filter((c) => w.includes(c))).toEqual([at(12, 12)]);
  });
});

describe('walkable regions', () => {
  test('largestRegion is the largest connected region, ties going to the one with the lowest cell, on any mask, from the step table or the plain neighbour table', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 9 }), fc.integer({ min: 1, max: 9 }), fc.array(fc.boolean(), { minLength: 81, maxLength: 81 }), (width, height, bits) => {
        const walkable = Uint8Array.from({ length: width * height }, (_, i) => (bits[i] ? 1 : 0));
        const steps = walkableSteps(neighbourTable(width, height), walkable);
        // The definition: each walkable cell's region, the first of the largest kept.
        let expected: Uint8Array = new Uint8Array(walkable.length);
        let size = 0;
        for (let i = 0; i < walkable.length; i++) {
          const region = connectedRegion(steps, walkable.length, i, walkable);
          const cells = region.reduce((n, bit) => n + bit, 0);
          if (cells > size) [expected, size] = [region, cells];
        }
        expect(largestRegion(steps, walkable)).toEqual(expected);
        expect(largestRegion(neighbourTable(width, height), walkable)).toEqual(expected);
      }),
    );
  });
});
