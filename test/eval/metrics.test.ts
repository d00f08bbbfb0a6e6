/** Path metrics of the nDTW paper and the geodesic distance they use on CerealBar maps. */
import fc from 'fast-check';
import { HEADINGS, buildWorld, cellAt, hexDistance, mapSchema, neighbourTable, type Cell, type World } from '../../shared/engine';
import { generateMap } from '../../shared/maps/generate';
import { GeodesicDistance } from '../../shared/eval/distance';
import {
  DEFAULT_SUCCESS_THRESHOLD,
  METRIC_DIRECTIONS,
  METRIC_NAMES,
  collapseRepeats,
  coverageWeightedByLengthScore,
  dynamicTimeWarping,
  navigationError,
  normalizedDynamicTimeWarping,
  pathCoverage,
  pathLength,
  pathMetrics,
  successRate,
  successWeightedByDtw,
  type Distance,
} from '../../shared/eval/metrics';

/** Points on a line, |i - j| apart: distances simple enough to check by hand. */
const onLine: Distance<number> = (a, b) => Math.abs(a - b);
const e = Math.exp;

/**
 * 7 x 3, rows listed north first. Water (W) walls off column 2 in rows 0-1, so (1, 0) and (3, 0)
 * are 2 apart on the hex grid but 5 apart on foot. (6, 0) is grass shut in by water: unreachable.
 */
function walledWorld(): World {
  const northFirst = [
    'GGGGGGG', // y = 2
    'GGWGGWW', // y = 1
    'GGWGGWG', // y = 0
  ];
  return buildWorld(
    mapSchema.parse({ format: 'cerealbar-map', version: 1, width: 7, height: 3, terrain: [...northFirst].reverse() }),
  );
}

describe('collapsing repeated nodes', () => {
  test('consecutive repeats go, revisits later on stay', () => {
    expect(collapseRepeats([0, 0, 1, 1, 1, 2, 1, 1], onLine)).toEqual([0, 1, 2, 1]);
  });

  test('repeats change no metric', () => {
    const reference = [0, 1, 2, 3];
    expect(pathMetrics(reference, [0, 0, 1, 2, 2, 2, 4], onLine, 1)).toEqual(pathMetrics(reference, [0, 1, 2, 4], onLine, 1));
    expect(pathMetrics([0, 0, 1, 2, 3, 3], [0, 1, 2, 4], onLine, 1)).toEqual(pathMetrics(reference, [0, 1, 2, 4], onLine, 1));
  });
});

describe('worked example on a line (d = |i - j|, d_th = 1)', () => {
  // R = (0, 1, 2, 3); Q = (0, 1, 1, 2, 4), which collapses to (0, 1, 2, 4): it overshoots by one.
  const metrics = pathMetrics([0, 1, 2, 3], [0, 1, 1, 2, 4], onLine, 1);

  test('length, errors and success', () => {
    expect(metrics.PL).toBe(4); // 1 + 1 + 2
    expect(metrics.NE).toBe(1); // |4 - 3|
    expect(metrics.ONE).toBe(1); // min(|0-3|, |1-3|, |2-3|, |4-3|) = min(3, 2, 1, 1)
    expect(metrics.SR).toBe(1); // 1 <= 1
    expect(metrics.OSR).toBe(1);
  });

  test('deviations', () => {
    // d(q, R) for q = 0, 1, 2, 4: 0, 0, 0, 1 (4 is 1 from 3).
    expect(metrics.AD).toBe(0.25); // (0 + 0 + 0 + 1) / 4
    expect(metrics.MD).toBe(1);
  });

  test('SPL and SED', () => {
    expect(metrics.SPL).toBe(0.75); // 1 * d(q1, r_last) / max(PL(Q), d(q1, r_last)) = 3 / max(4, 3)
    // A_R = (0,1)(1,2)(2,3), A_Q = (0,1)(1,2)(2,4): one substitution. 1 - 1 / max(3, 3).
    expect(metrics.SED).toBeCloseTo(2 / 3, 12);
  });

  test('CLS', () => {
    // d(r, Q) for r = 0, 1, 2, 3: 0, 0, 0, 1, so PC = (3 + e^-1) / 4.
    const coverage = (3 + e(-1)) / 4;
    expect(pathCoverage([0, 1, 2, 3], [0, 1, 2, 4], onLine, 1)).toBeCloseTo(coverage, 12);
    // PC * PL(R) = 3 PC ~ 2.526 < PL(Q) = 4, so LS = 3 PC / (3 PC + 4 - 3 PC) = 3 PC / 4,
    // and CLS = PC * 3 PC / 4 = 3 (3 + e^-1)^2 / 64 ~ 0.5317.
    expect(metrics.CLS).toBeCloseTo((3 * (3 + e(-1)) ** 2) / 64, 12);
  });

  test('nDTW and SDTW', () => {
    // The diagonal warping (0,0)(1,1)(2,2)(3,4) costs 0 + 0 + 0 + 1, and (r_last, q_last) is forced: DTW = 1.
    expect(dynamicTimeWarping([0, 1, 2, 3], [0, 1, 1, 2, 4], onLine)).toBe(1);
    expect(metrics.nDTW).toBeCloseTo(e(-1 / 4), 12); // exp(-1 / (|R| d_th)) = exp(-1 / 4)
    expect(metrics.SDTW).toBeCloseTo(e(-1 / 4), 12); // SR = 1
  });
});

describe('success is judged on the LAST nodes', () => {
  const reference = [0, 1, 2, 3];

  test('a query that starts on the reference end but walks away fails', () => {
    const query = [3, 4, 5, 6];
    const metrics = pathMetrics(reference, query, onLine, 1);
    expect(metrics.NE).toBe(3); // |6 - 3|
    expect(metrics.SR).toBe(0);
    expect(metrics.ONE).toBe(0); // it was on the goal at the start...
    expect(metrics.OSR).toBe(1); // ...which only the oracle metrics credit
    // DTW: (0,3)(1,3)(2,3)(3,3)(3,4)(3,5)(3,6) = 3 + 2 + 1 + 0 + 1 + 2 + 3 = 12, so nDTW = exp(-12 / 4).
    expect(metrics.nDTW).toBeCloseTo(e(-3), 12);
    expect(metrics.SDTW).toBe(0);
    expect(metrics.SPL).toBe(0);
    expect(metrics.SED).toBe(0);
  });

  test('a query that starts with the reference but ends far away fails (Algorithm 2 would pass it)', () => {
    const query = [0, -1, -2, -3];
    expect(successRate(reference, query, onLine, 1)).toBe(0);
    expect(successWeightedByDtw(reference, query, onLine, 1)).toBe(0);
  });

  test('a query that starts elsewhere but ends on the goal succeeds (Algorithm 2 would fail it)', () => {
    const query = [2, 3];
    expect(successRate(reference, query, onLine, 1)).toBe(1);
    // C[i][j] for r = 0..3 (rows), q = 2, 3 (columns):
    //   r=0: 2, 5   r=1: 3, 4   r=2: 3, 4   r=3: 4, 3   -> DTW = 3: (0,2)(1,2)(2,2)(3,3) = 2 + 1 + 0 + 0.
    expect(dynamicTimeWarping(reference, query, onLine)).toBe(3);
    expect(successWeightedByDtw(reference, query, onLine, 1)).toBeCloseTo(e(-3 / 4), 12);
  });

  test('d_th = 0 asks for the exact end node', () => {
    expect(successRate(reference, [0, 1, 2], onLine, 0)).toBe(0);
    expect(successRate(reference, [0, 1, 2], onLine, 1)).toBe(1);
    expect(successRate(reference, [1, 2, 3], onLine, 0)).toBe(1);
  });
});

describe('the 0/0 cases', () => {
  test('neither path moves: everything is perfect', () => {
    // SPL: d(q1, r_last) = 0 = PL(Q); SED: no steps on either side; LS: PC * PL(R) = 0 = PL(Q).
    expect(pathMetrics([5], [5, 5], onLine, 1)).toEqual({
      PL: 0, NE: 0, ONE: 0, SR: 1, OSR: 1, AD: 0, MD: 0, SPL: 1, SED: 1, CLS: 1, nDTW: 1, SDTW: 1,
    });
  });

  test('the reference stays put and the query wanders off and back', () => {
    const metrics = pathMetrics([5], [5, 6, 5], onLine, 1);
    expect(metrics.SR).toBe(1);
    expect(metrics.SPL).toBe(0); // 0 / max(PL(Q) = 2, 0)
    expect(metrics.SED).toBe(0); // A_R is empty, A_Q has 2 steps: 1 - 2 / 2
    expect(metrics.CLS).toBe(0); // PC = 1, PL(R) = 0: LS = 0 / (0 + |0 - 2|)
    expect(metrics.nDTW).toBeCloseTo(e(-1), 12); // r = 5 aligned with 5, 6, 5: DTW = 1, |R| = 1
  });

  test('the query starts on the goal and stays there', () => {
    expect(pathMetrics([0, 1], [1], onLine, 1).SPL).toBe(1);
  });
});

describe('identical paths', () => {
  test('score perfectly on every fidelity metric', () => {
    const reference = [0, 1, 2, 3, 2, 1, 4];
    expect(pathMetrics(reference, reference, onLine, 1)).toMatchObject({
      NE: 0, ONE: 0, SR: 1, OSR: 1, AD: 0, MD: 0, SED: 1, CLS: 1, nDTW: 1, SDTW: 1,
    });
  });

  test('SPL is 1 only when the reference is itself a shortest path', () => {
    expect(pathMetrics([0, 1, 2, 3], [0, 1, 2, 3], onLine, 1).SPL).toBe(1);
    // A detour (0, 1, 0, 3): PL = 1 + 1 + 3 = 5, but d(0, 3) = 3, so even R itself gets 3 / 5.
    expect(pathMetrics([0, 1, 0, 3], [0, 1, 0, 3], onLine, 1).SPL).toBe(0.6);
  });
});

describe('inputs', () => {
  test('an empty path is an error', () => {
    expect(() => pathLength([], onLine)).toThrow(RangeError);
    expect(() => navigationError([0], [], onLine)).toThrow(RangeError);
  });

  test('nDTW, CLS and SDTW need d_th > 0; success only needs d_th >= 0', () => {
    expect(() => pathMetrics([0], [0], onLine, 0)).toThrow(RangeError);
    expect(() => normalizedDynamicTimeWarping([0], [0], onLine, 0)).toThrow(RangeError);
    expect(() => coverageWeightedByLengthScore([0], [0], onLine, -1)).toThrow(RangeError);
    expect(() => successRate([0], [0], onLine, NaN)).toThrow(RangeError);
    expect(successRate([0], [0], onLine, 0)).toBe(1);
  });

  test('every metric has a direction; the default threshold is one hex', () => {
    expect(Object.keys(METRIC_DIRECTIONS).sort()).toEqual([...METRIC_NAMES].sort());
    expect(METRIC_DIRECTIONS.SDTW).toBe('higher');
    expect(METRIC_DIRECTIONS.NE).toBe('lower');
    expect(DEFAULT_SUCCESS_THRESHOLD).toBe(1);
  });
});

describe('properties on a line', () => {
  const path = fc.array(fc.integer({ min: 0, max: 12 }), { minLength: 1, maxLength: 10 });
  const threshold = fc.constantFrom(0.5, 1, 2, 3);

  test('nDTW is in (0, 1], 1 for the reference itself; SPL <= SR, SDTW <= nDTW; scores in [0, 1]', () => {
    fc.assert(
      fc.property(path, path, threshold, (reference, query, dTh) => {
        const metrics = pathMetrics(reference, query, onLine, dTh);
        for (const name of METRIC_NAMES) expect(Number.isFinite(metrics[name])).toBe(true);
        expect(metrics.nDTW).toBeGreaterThan(0);
        expect(metrics.nDTW).toBeLessThanOrEqual(1);
        expect(normalizedDynamicTimeWarping(reference, reference, onLine, dTh)).toBe(1);
        expect(metrics.SPL).toBeLessThanOrEqual(metrics.SR);
        expect(metrics.SED).toBeLessThanOrEqual(metrics.SR);
        expect(metrics.SDTW).toBeLessThanOrEqual(metrics.nDTW);
        for (const name of ['SR', 'OSR', 'SPL', 'SED', 'CLS', 'SDTW'] as const) {
          expect(metrics[name]).toBeGreaterThanOrEqual(0);
          expect(metrics[name]).toBeLessThanOrEqual(1);
        }
        expect(metrics.ONE).toBeLessThanOrEqual(metrics.NE);
        expect(metrics.AD).toBeLessThanOrEqual(metrics.MD);
      }),
      { numRuns: 300 },
    );
  });

  test('nDTW is 1 only for the same path (after collapsing)', () => {
    fc.assert(
      fc.property(path, path, (reference, query) => {
        const same = String(collapseRepeats(reference, onLine)) === String(collapseRepeats(query, onLine));
        expect(normalizedDynamicTimeWarping(reference, query, onLine, 1) === 1).toBe(same);
      }),
      { numRuns: 300 },
    );
  });
});

describe('geodesic distance', () => {
  const world = walledWorld();

  test('goes around an obstacle', () => {
    const geodesic = new GeodesicDistance(world);
    // (1,0) -NE-> (1,1) -NE-> (2,2) -E-> (3,2) -SE-> (3,1) -SW-> (3,0): the water at (2,0), (2,1) is in the way.
    expect(geodesic.between({ x: 1, y: 0 }, { x: 3, y: 0 })).toBe(5);
    expect(hexDistance({ x: 1, y: 0 }, { x: 3, y: 0 })).toBe(2);
    expect(geodesic.between({ x: 1, y: 1 }, { x: 3, y: 1 })).toBe(3); // via (2,2), (3,2)
    expect(geodesic.between({ x: 4, y: 0 }, { x: 4, y: 0 })).toBe(0);
  });

  test('endpoints may be unwalkable, cells in between may not', () => {
    const geodesic = new GeodesicDistance(world);
    expect(geodesic.between({ x: 1, y: 0 }, { x: 2, y: 0 })).toBe(1); // into the water cell next door
    expect(geodesic.between({ x: 2, y: 0 }, { x: 2, y: 0 })).toBe(0);
    expect(geodesic.between({ x: 2, y: 0 }, { x: 3, y: 0 })).toBe(1);
    // (2,0) and (2,1) are neighbours, but both are water: no walkable cell needed between them.
    expect(geodesic.between({ x: 2, y: 0 }, { x: 2, y: 1 })).toBe(1);
  });

  test('a cell shut in by water is unreachable: Infinity', () => {
    const geodesic = new GeodesicDistance(world);
    expect(geodesic.between({ x: 0, y: 0 }, { x: 6, y: 0 })).toBe(Infinity);
    expect(geodesic.between({ x: 6, y: 0 }, { x: 4, y: 0 })).toBe(Infinity); // (5,0) is water, not an endpoint
    expect(geodesic.between({ x: 6, y: 0 }, { x: 5, y: 0 })).toBe(1);
  });

  test('is symmetric, whichever endpoint was searched from first', () => {
    const forward = new GeodesicDistance(world);
    const backward = new GeodesicDistance(world);
    const cells = Array.from({ length: world.width * world.height }, (_, i) => cellAt(world, i));
    for (const a of cells) {
      for (const b of cells) expect(forward.between(a, b)).toBe(backward.between(b, a));
    }
  });

  test('cells off the map are an error', () => {
    expect(() => new GeodesicDistance(world).between({ x: 0, y: 0 }, { x: 7, y: 0 })).toThrow(RangeError);
  });

  test('equals the hex distance on open grass, and is never shorter than it', () => {
    const open = buildWorld(
      mapSchema.parse({ format: 'cerealbar-map', version: 1, width: 12, height: 10, terrain: Array(10).fill('G'.repeat(12)) }),
    );
    const generated = buildWorld(generateMap(7));
    const cell = (w: World) => fc.record({ x: fc.integer({ min: 0, max: w.width - 1 }), y: fc.integer({ min: 0, max: w.height - 1 }) });
    const onOpen = new GeodesicDistance(open);
    const onGenerated = new GeodesicDistance(generated);
    fc.assert(fc.property(cell(open), cell(open), (a, b) => void expect(onOpen.between(a, b)).toBe(hexDistance(a, b))));
    fc.assert(
      fc.property(cell(generated), cell(generated), (a, b) => {
        expect(onGenerated.between(a, b)).toBeGreaterThanOrEqual(hexDistance(a, b));
      }),
    );
  });
});

describe('worked examples on a hex world with an obstacle (geodesic d, d_th = 1)', () => {
  const d = new GeodesicDistance(walledWorld()).between;
  // The shortest way from (1,0) round the water to (3,0): 5 steps, so |R| = 6.
  const reference: Cell[] = [
    { x: 1, y: 0 }, { x: 1, y: 1 }, { x: 2, y: 2 }, { x: 3, y: 2 }, { x: 3, y: 1 }, { x: 3, y: 0 },
  ];

  test('a follower that turns back (the geodesic NE is 5 where the hex distance says 2)', () => {
    // Up to (1,1), one rotation, back to (1,0): collapses to (1,0), (1,1), (1,0).
    const query: Cell[] = [{ x: 1, y: 0 }, { x: 1, y: 1 }, { x: 1, y: 1 }, { x: 1, y: 0 }];
    const metrics = pathMetrics(reference, query, d, 1);
    expect(metrics.PL).toBe(2);
    expect(metrics.NE).toBe(5); // d((1,0), (3,0))
    expect(metrics.ONE).toBe(4); // min(d((1,0), (3,0)) = 5, d((1,1), (3,0)) = 4)
    expect([metrics.SR, metrics.OSR, metrics.SPL, metrics.SED, metrics.SDTW]).toEqual([0, 0, 0, 0, 0]);
    expect([metrics.AD, metrics.MD]).toEqual([0, 0]); // it never left the reference path
    // d(r, Q) for the six reference cells: 0, 0, 1, 2, 3, 4 (distances to (1,1)).
    const coverage = (2 + e(-1) + e(-2) + e(-3) + e(-4)) / 6;
    // PC * PL(R) = 5 PC ~ 2.143 > PL(Q) = 2, so LS = 5 PC / (5 PC + 5 PC - 2).
    expect(metrics.CLS).toBeCloseTo((coverage * 5 * coverage) / (10 * coverage - 2), 12);
    // d(r_i, q_j):        r = (1,0) (1,1) (2,2) (3,2) (3,1) (3,0)
    //   q = (1,0)               0     1     2     3     4     5
    //   q = (1,1)               1     0     1     2     3     4
    // Cheapest warping: (r1,q1)(r2,q2)(r3,q2)(r4,q2)(r5,q2)(r6,q3) = 0 + 0 + 1 + 2 + 3 + 5 = 11.
    expect(dynamicTimeWarping(reference, query, d)).toBe(11);
    expect(metrics.nDTW).toBeCloseTo(e(-11 / 6), 12);
  });

  test('a follower that stops next to the goal succeeds with d_th = 1', () => {
    // The reference with one rotation on (1,1) and without its last step: it stops on (3,1).
    const query: Cell[] = [{ x: 1, y: 0 }, { x: 1, y: 1 }, { x: 1, y: 1 }, { x: 2, y: 2 }, { x: 3, y: 2 }, { x: 3, y: 1 }];
    const metrics = pathMetrics(reference, query, d, DEFAULT_SUCCESS_THRESHOLD);
    expect(metrics).toMatchObject({ PL: 4, NE: 1, ONE: 1, SR: 1, OSR: 1, AD: 0, MD: 0 });
    expect(metrics.SPL).toBe(1); // d(q1, r_last) / max(PL(Q), d(q1, r_last)) = 5 / max(4, 5)
    expect(metrics.SED).toBeCloseTo(0.8, 12); // A_Q is A_R without its last step: 1 - 1 / 5
    const coverage = (5 + e(-1)) / 6; // only r_last is off Q, by 1
    // 5 PC ~ 4.473 > PL(Q) = 4: LS = 5 PC / (5 PC + 5 PC - 4).
    expect(metrics.CLS).toBeCloseTo((coverage * 5 * coverage) / (10 * coverage - 4), 12);
    // Only the forced pair (r_last, q_last) = ((3,0), (3,1)) costs anything: DTW = 1.
    expect(metrics.nDTW).toBeCloseTo(e(-1 / 6), 12);
    expect(metrics.SDTW).toBeCloseTo(e(-1 / 6), 12);
    // With d_th = 0 the same follower fails.
    expect(successRate(reference, query, d, 0)).toBe(0);
  });

  test("the paper's point: CLS ignores order, nDTW does not", () => {
    // a, b, c are mutually adjacent: each pair is 1 apart.
    const [a, b, c]: Cell[] = [{ x: 0, y: 0 }, { x: 1, y: 0 }, { x: 0, y: 1 }];
    expect([d(a, b), d(b, c), d(a, c)]).toEqual([1, 1, 1]);
    const reference = [a, b, c, a];
    const reversed = [a, c, b, a];
    // PC = 1 for both (every node is visited); PL = 3 for both, so LS = 3 / (3 + 0) = 1.
    expect(coverageWeightedByLengthScore(reference, reversed, d, 1)).toBe(1);
    expect(coverageWeightedByLengthScore(reference, reference, d, 1)).toBe(1);
    // C[i][j] (rows r = a b c a, columns q = a c b a):
    //   a: 0 1 2 2   b: 1 1 1 2   c: 2 1 2 2   a: 2 2 2 2   -> DTW = 2, nDTW = exp(-2 / 4).
    expect(normalizedDynamicTimeWarping(reference, reference, d, 1)).toBe(1);
    expect(normalizedDynamicTimeWarping(reference, reversed, d, 1)).toBeCloseTo(e(-0.5), 12);
    expect(successWeightedByDtw(reference, reversed, d, 1)).toBeLessThan(successWeightedByDtw(reference, reference, d, 1));
  });

  test('a follower stuck in another component: no NaN', () => {
    const metrics = pathMetrics([{ x: 3, y: 0 }, { x: 4, y: 0 }], [{ x: 6, y: 0 }], d, 1);
    expect(metrics).toEqual({
      PL: 0, NE: Infinity, ONE: Infinity, SR: 0, OSR: 0, AD: Infinity, MD: Infinity, SPL: 0, SED: 0, CLS: 0, nDTW: 0, SDTW: 0,
    });
  });
});

describe('random walks on a generated map', () => {
  const world = buildWorld(generateMap(3));
  const table = neighbourTable(world.width, world.height);
  const regionCells = world.cardCells;
  const STAY = HEADINGS.length; // a rotation: the walker keeps its cell

  /** Walks from a region cell; a move into an obstacle does nothing, as in the game. */
  function walk(startChoice: number, moves: readonly number[]): Cell[] {
    let index = regionCells[startChoice % regionCells.length];
    const cells = [cellAt(world, index)];
    for (const move of moves) {
      const next = move === STAY ? -1 : table[index * HEADINGS.length + move];
      if (next >= 0 && world.walkable[next]) index = next;
      cells.push(cellAt(world, index));
    }
    return cells;
  }

  const walker = fc
    .tuple(fc.nat(), fc.array(fc.integer({ min: 0, max: STAY }), { maxLength: 25 }))
    .map(([start, moves]) => walk(start, moves));

  test('metrics are finite and in range; nDTW(R, R) = 1; SPL <= SR; SDTW <= nDTW', () => {
    const d = new GeodesicDistance(world).between;
    fc.assert(
      fc.property(walker, walker, (reference, query) => {
        const metrics = pathMetrics(reference, query, d, DEFAULT_SUCCESS_THRESHOLD);
        for (const name of METRIC_NAMES) expect(Number.isFinite(metrics[name])).toBe(true);
        expect(metrics.nDTW).toBeGreaterThan(0);
        expect(metrics.nDTW).toBeLessThanOrEqual(1);
        expect(metrics.SPL).toBeLessThanOrEqual(metrics.SR);
        expect(metrics.SDTW).toBeLessThanOrEqual(metrics.nDTW);
        expect(metrics.CLS).toBeLessThanOrEqual(1);
        const self = pathMetrics(reference, reference, d, DEFAULT_SUCCESS_THRESHOLD);
        expect(self).toMatchObject({ NE: 0, SR: 1, SED: 1, CLS: 1, nDTW: 1, SDTW: 1 });
      }),
      { numRuns: 200 },
    );
  });
});
