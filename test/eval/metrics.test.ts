/** Path metrics of the nDTW paper and the geodesic distance they use on CerealBar maps. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { HEADINGS, buildWorld, cellAt, hexDistance, mapSchema, neighbourTable, type Cell, type Pose, type World } from '../../shared/engine';
import { generateMap } from '../../shared/maps/generate';
import { GeodesicDistance } from '../../shared/eval/distance';
import { importCb2Game } from '../../shared/cb2/import';
import { loadRecording } from '../../shared/eval/recording';
import { serializeLine } from '../../shared/log/recorder';
import { cb2FixtureFolders, cb2FixtureGame } from '../cb2/fixtureGames';
import {
  DEFAULT_SUCCESS_THRESHOLD,
  METRIC_DIRECTIONS,
  METRIC_NAMES,
  collapseRepeats,
  coverageWeightedByLengthScore,
  dynamicTimeWarping,
  navigationError,
  normalizedDynamicTimeWarping,
  oracleSuccessRate,
  pathCoverage,
  pathLength,
  pathMetrics,
  successRate,
  successWeightedByDtw,
  successWeightedByPathLength,
  type Distance,
  type MetricName,
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

describe('M-11: collapsing repeated nodes', () => {
  test('consecutive repeats go, revisits later on stay', () => {
    expect(collapseRepeats([0, 0, 1, 1, 1, 2, 1, 1], onLine)).toEqual([0, 1, 2, 1]);
  });

  test('repeats change no metric', () => {
    const reference = [0, 1, 2, 3];
    expect(pathMetrics(reference, [0, 0, 1, 2, 2, 2, 4], onLine, 1)).toEqual(pathMetrics(reference, [0, 1, 2, 4], onLine, 1));
    expect(pathMetrics([0, 0, 1, 2, 3, 3], [0, 1, 2, 4], onLine, 1)).toEqual(pathMetrics(reference, [0, 1, 2, 4], onLine, 1));
  });
});

describe('M-47: worked example on a line (d = |i - j|, d_th = 1)', () => {
  // R = (0, 1, 2, 3); Q = (0, 1, 1, 2, 4), which collapses to (0, 1, 2, 4): it overshoots by one.
  const metrics = pathMetrics([0, 1, 2, 3], [0, 1, 1, 2, 4], onLine, 1);

  test('M-14, M-15, M-16, M-17, M-18: length, errors and success', () => {
    expect(metrics.PL).toBe(4); // 1 + 1 + 2
    expect(metrics.NE).toBe(1); // |4 - 3|
    expect(metrics.ONE).toBe(1); // min(|0-3|, |1-3|, |2-3|, |4-3|) = min(3, 2, 1, 1)
    expect(metrics.SR).toBe(1); // 1 <= 1
    expect(metrics.OSR).toBe(1);
  });

  test('M-13, M-19, M-20: deviations', () => {
    // d(q, R) for q = 0, 1, 2, 4: 0, 0, 0, 1 (4 is 1 from 3).
    expect(metrics.AD).toBe(0.25); // (0 + 0 + 0 + 1) / 4
    expect(metrics.MD).toBe(1);
  });

  test('M-21, M-22, M-26: SPL and SED', () => {
    expect(metrics.SPL).toBe(0.75); // 1 * d(q1, r_last) / max(PL(Q), d(q1, r_last)) = 3 / max(4, 3)
    // A_R = (0,1)(1,2)(2,3), A_Q = (0,1)(1,2)(2,4): one substitution. 1 - 1 / max(3, 3).
    expect(metrics.SED).toBeCloseTo(2 / 3, 12);
  });

  test('M-23, M-27: CLS', () => {
    // d(r, Q) for r = 0, 1, 2, 3: 0, 0, 0, 1, so PC = (3 + e^-1) / 4.
    const coverage = (3 + e(-1)) / 4;
    expect(pathCoverage([0, 1, 2, 3], [0, 1, 2, 4], onLine, 1)).toBeCloseTo(coverage, 12);
    // PC * PL(R) = 3 PC ~ 2.526 < PL(Q) = 4, so LS = 3 PC / (3 PC + 4 - 3 PC) = 3 PC / 4,
    // and CLS = PC * 3 PC / 4 = 3 (3 + e^-1)^2 / 64 ~ 0.5317.
    expect(metrics.CLS).toBeCloseTo((3 * (3 + e(-1)) ** 2) / 64, 12);
  });

  test('M-24, M-25, M-28: nDTW and SDTW', () => {
    // The diagonal warping (0,0)(1,1)(2,2)(3,4) costs 0 + 0 + 0 + 1, and (r_last, q_last) is forced: DTW = 1.
    expect(dynamicTimeWarping([0, 1, 2, 3], [0, 1, 1, 2, 4], onLine)).toBe(1);
    expect(metrics.nDTW).toBeCloseTo(e(-1 / 4), 12); // exp(-1 / (|R| d_th)) = exp(-1 / 4)
    expect(metrics.SDTW).toBeCloseTo(e(-1 / 4), 12); // SR = 1
  });
});

describe('M-12: success is judged on the LAST nodes', () => {
  const reference = [0, 1, 2, 3];

  test('M-49: a query that starts on the reference end but walks away fails', () => {
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

  test('M-46: d_th = 0 asks for the exact end node', () => {
    expect(successRate(reference, [0, 1, 2], onLine, 0)).toBe(0);
    expect(successRate(reference, [0, 1, 2], onLine, 1)).toBe(1);
    expect(successRate(reference, [1, 2, 3], onLine, 0)).toBe(1);
  });
});

describe('the 0/0 cases', () => {
  test('M-32, M-33, M-34: neither path moves: everything is perfect', () => {
    // SPL: d(q1, r_last) = 0 = PL(Q); SED: no steps on either side; LS: PC * PL(R) = 0 = PL(Q).
    expect(pathMetrics([5], [5, 5], onLine, 1)).toEqual({
      PL: 0, NE: 0, ONE: 0, SR: 1, OSR: 1, AD: 0, MD: 0, SPL: 1, SED: 1, CLS: 1, nDTW: 1, SDTW: 1,
    });
  });

  test('M-21, M-22, M-23: the reference stays put and the query wanders off and back', () => {
    const metrics = pathMetrics([5], [5, 6, 5], onLine, 1);
    expect(metrics.SR).toBe(1);
    expect(metrics.SPL).toBe(0); // 0 / max(PL(Q) = 2, 0)
    expect(metrics.SED).toBe(0); // A_R is empty, A_Q has 2 steps: 1 - 2 / 2
    expect(metrics.CLS).toBe(0); // PC = 1, PL(R) = 0: LS = 0 / (0 + |0 - 2|)
    expect(metrics.nDTW).toBeCloseTo(e(-1), 12); // r = 5 aligned with 5, 6, 5: DTW = 1, |R| = 1
  });

  test('M-32: the query starts on the goal and stays there', () => {
    expect(pathMetrics([0, 1], [1], onLine, 1).SPL).toBe(1);
  });

  test('M-33, M-34: neither path moves, on different nodes: SED = SR and CLS = PC', () => {
    // d = 1: a success. SED has no steps to compare; LS is 0/0, so CLS = PC = e^-1.
    expect(pathMetrics([5], [6], onLine, 1)).toMatchObject({ SR: 1, SED: 1, CLS: e(-1) });
    // d = 2: a failure, so SED = SR = 0, and CLS = PC = e^-2 (CLS is not gated by SR).
    expect(pathMetrics([5], [7], onLine, 1)).toMatchObject({ SR: 0, SED: 0, CLS: e(-2) });
    expect(pathCoverage([5], [7], onLine, 1)).toBe(e(-2));
  });

  test('M-32: no path from q_1 to the goal, yet a success (through an unwalkable cell): SPL = 0, not NaN', () => {
    const d = new GeodesicDistance(walledWorld()).between;
    // (4,0) -> (5,0), a water cell next to (6,0), which is shut in: d((4,0), (6,0)) = Infinity.
    const query: Cell[] = [{ x: 4, y: 0 }, { x: 5, y: 0 }];
    const reference: Cell[] = [{ x: 6, y: 0 }];
    expect(d(query[0], reference[0])).toBe(Infinity);
    expect(successRate(reference, query, d, 1)).toBe(1); // d((5,0), (6,0)) = 1
    expect(successWeightedByPathLength(reference, query, d, 1)).toBe(0);
  });
});

describe('M-31: identical paths', () => {
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
  test('M-8: an empty path is an error', () => {
    expect(() => pathLength([], onLine)).toThrow(RangeError);
    expect(() => navigationError([0], [], onLine)).toThrow(RangeError);
  });

  test('M-46: nDTW, CLS, SDTW and pathMetrics need d_th > 0; SR and OSR only need d_th >= 0', () => {
    expect(() => pathMetrics([0], [0], onLine, 0)).toThrow(RangeError);
    expect(() => normalizedDynamicTimeWarping([0], [0], onLine, 0)).toThrow(RangeError);
    expect(() => coverageWeightedByLengthScore([0], [0], onLine, -1)).toThrow(RangeError);
    expect(() => coverageWeightedByLengthScore([0], [0], onLine, 0)).toThrow(RangeError);
    expect(() => successWeightedByDtw([0], [0], onLine, 0)).toThrow(RangeError);
    expect(successRate([0], [0], onLine, 0)).toBe(1);
    expect(oracleSuccessRate([0, 1], [1, 2], onLine, 0)).toBe(1);
    expect(oracleSuccessRate([0, 1], [2, 3], onLine, 0)).toBe(0);
    for (const bad of [-1, NaN, Infinity]) {
      expect(() => successRate([0], [0], onLine, bad)).toThrow(RangeError);
      expect(() => oracleSuccessRate([0], [0], onLine, bad)).toThrow(RangeError);
      expect(() => normalizedDynamicTimeWarping([0], [0], onLine, bad)).toThrow(RangeError);
    }
  });

  test('M-1, M-44: every metric has a direction; the default threshold is one hex', () => {
    expect(Object.keys(METRIC_DIRECTIONS).sort()).toEqual([...METRIC_NAMES].sort());
    expect(METRIC_DIRECTIONS.SDTW).toBe('higher');
    expect(METRIC_DIRECTIONS.NE).toBe('lower');
    expect(DEFAULT_SUCCESS_THRESHOLD).toBe(1);
  });

  test("M-1: the names are in Table 3's order and the directions are the doc's 'better' column", () => {
    // The definitions table of docs/metrics.md: | **M-n** | NAME, long name | better | formula |.
    const rows = [...readFileSync(join(__dirname, '../../docs/metrics.md'), 'utf8').matchAll(/^\| \*\*M-\d+\*\* \| ([^,|]+), [^|]+\| (\w+) \|/gm)];
    expect(rows.map((row) => row[1])).toEqual([...METRIC_NAMES]);
    expect(METRIC_NAMES).toEqual(['PL', 'NE', 'ONE', 'SR', 'OSR', 'AD', 'MD', 'SPL', 'SED', 'CLS', 'nDTW', 'SDTW']);
    expect(Object.fromEntries(rows.map((row) => [row[1], row[2]]))).toEqual(METRIC_DIRECTIONS);
  });
});

describe('properties on a line', () => {
  const path = fc.array(fc.integer({ min: 0, max: 12 }), { minLength: 1, maxLength: 10 });
  const threshold = fc.constantFrom(0.5, 1, 2, 3);

  test('M-29, M-30: nDTW is in (0, 1], 1 for the reference itself; SPL <= SR, SDTW <= nDTW; scores in [0, 1]', () => {
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

  test('M-29: nDTW is 1 only for the same path (after collapsing)', () => {
    fc.assert(
      fc.property(path, path, (reference, query) => {
        const same = String(collapseRepeats(reference, onLine)) === String(collapseRepeats(query, onLine));
        expect(normalizedDynamicTimeWarping(reference, query, onLine, 1) === 1).toBe(same);
      }),
      { numRuns: 300 },
    );
  });
});

/** The world of the first real CB2 game of the fixtures: a map with walls. */
function cb2FixtureWorld(): World {
  const { lines } = importCb2Game(cb2FixtureGame(cb2FixtureFolders()[0]));
  return loadRecording(lines.map((line) => `${serializeLine(line)}\n`).join('')).states[0].world;
}

describe('geodesic distance', () => {
  const world = walledWorld();

  test('M-2, M-4: goes around an obstacle', () => {
    const geodesic = new GeodesicDistance(world);
    // (1,0) -NE-> (1,1) -NE-> (2,2) -E-> (3,2) -SE-> (3,1) -SW-> (3,0): the water at (2,0), (2,1) is in the way.
    expect(geodesic.between({ x: 1, y: 0 }, { x: 3, y: 0 })).toBe(5);
    expect(hexDistance({ x: 1, y: 0 }, { x: 3, y: 0 })).toBe(2);
    expect(geodesic.between({ x: 1, y: 1 }, { x: 3, y: 1 })).toBe(3); // via (2,2), (3,2)
    expect(geodesic.between({ x: 4, y: 0 }, { x: 4, y: 0 })).toBe(0);
  });

  test('M-3: endpoints may be unwalkable, cells in between may not', () => {
    const geodesic = new GeodesicDistance(world);
    expect(geodesic.between({ x: 1, y: 0 }, { x: 2, y: 0 })).toBe(1); // into the water cell next door
    expect(geodesic.between({ x: 2, y: 0 }, { x: 2, y: 0 })).toBe(0);
    expect(geodesic.between({ x: 2, y: 0 }, { x: 3, y: 0 })).toBe(1);
    // (2,0) and (2,1) are neighbours, but both are water: no walkable cell needed between them.
    expect(geodesic.between({ x: 2, y: 0 }, { x: 2, y: 1 })).toBe(1);
  });

  test('M-4: a cell shut in by water is unreachable: Infinity', () => {
    const geodesic = new GeodesicDistance(world);
    expect(geodesic.between({ x: 0, y: 0 }, { x: 6, y: 0 })).toBe(Infinity);
    expect(geodesic.between({ x: 6, y: 0 }, { x: 4, y: 0 })).toBe(Infinity); // (5,0) is water, not an endpoint
    expect(geodesic.between({ x: 6, y: 0 }, { x: 5, y: 0 })).toBe(1);
  });

  test('M-2: is symmetric, whichever endpoint was searched from first', () => {
    const forward = new GeodesicDistance(world);
    const backward = new GeodesicDistance(world);
    const cells = Array.from({ length: world.width * world.height }, (_, i) => cellAt(world, i));
    for (const a of cells) {
      for (const b of cells) expect(forward.between(a, b)).toBe(backward.between(b, a));
    }
  });

  test("a cell's distance field holds its distance to every cell, -1 where no walk reaches", () => {
    const geodesic = new GeodesicDistance(world);
    const cells = Array.from({ length: world.width * world.height }, (_, i) => cellAt(world, i));
    for (const a of cells) {
      const field = geodesic.fieldFrom(a);
      const apart = new GeodesicDistance(world);
      cells.forEach((b, i) => expect(field[i]).toBe(Number.isFinite(apart.between(b, a)) ? apart.between(b, a) : -1));
    }
    expect(Array.from(geodesic.fieldFrom({ x: 6, y: 0 })).filter((steps) => steps < 0).length).toBeGreaterThan(0);
  });

  test('a search stopped at the cell a query needs and resumed for the next gives the whole search\'s distances', () => {
    const worlds = [world, buildWorld(generateMap(3)), buildWorld(generateMap(11)), cb2FixtureWorld()];
    expect(worlds[3].map.walls?.length).toBeGreaterThan(0);
    fc.assert(
      fc.property(fc.integer({ min: 0, max: worlds.length - 1 }), fc.nat(), fc.array(fc.nat(), { minLength: 1, maxLength: 30 }), (w, from, asked) => {
        const on = worlds[w];
        const cells = on.width * on.height;
        const source = cellAt(on, from % cells);
        const whole = new GeodesicDistance(on).fieldFrom(source);
        const lazy = new GeodesicDistance(on);
        const row = lazy.searchFrom(source);
        for (const a of asked) expect(lazy.stepsTo(row, a % cells)).toBe(whole[a % cells]);
        // Queries between any two cells go on from the part searched, from either end.
        for (const a of asked) expect(lazy.between(cellAt(on, a % cells), source)).toBe(whole[a % cells] < 0 ? Infinity : whole[a % cells]);
        expect(Array.from(lazy.fieldFrom(source))).toEqual(Array.from(whole));
        // A finished search has let its queue go; asking it again asks nothing more of it.
        for (const a of asked) expect(lazy.stepsTo(row, a % cells)).toBe(whole[a % cells]);
      }),
      { numRuns: 300 },
    );
  });

  test('M-5: cells off the map are an error', () => {
    expect(() => new GeodesicDistance(world).between({ x: 0, y: 0 }, { x: 7, y: 0 })).toThrow(RangeError);
    const geodesic = new GeodesicDistance(world);
    expect(() => geodesic.searchFrom({ x: -1, y: 0 })).toThrow(RangeError);
    const row = geodesic.searchFrom({ x: 1, y: 0 });
    const before = Array.from(row.steps);
    for (const index of [-1, world.width * world.height, 1.5, Number.NaN]) expect(() => geodesic.stepsTo(row, index)).toThrow(/off the map/);
    expect(Array.from(row.steps)).toEqual(before);
  });

  test('M-6: equals the hex distance on open grass, and is never shorter than it', () => {
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

  test('M-14, M-15, M-16, M-19, M-20, M-23, M-24: a follower that turns back (the geodesic NE is 5 where the hex distance says 2)', () => {
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

  test('M-44, M-46: a follower that stops next to the goal succeeds with d_th = 1', () => {
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

  test("M-48: the paper's point: CLS ignores order, nDTW does not", () => {
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

  test('M-35: a follower stuck in another component: no NaN', () => {
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

  test('M-29, M-30, M-31: metrics are finite and in range; nDTW(R, R) = 1; SPL <= SR; SDTW <= nDTW', () => {
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

/**
 * The definitions of docs/metrics.md written out again, as plainly as possible and sharing no code
 * with the implementation: DTW by trying every warping, ED by the textbook recursion.
 */
function byTheBook(reference: readonly number[], query: readonly number[], dTh: number): Record<MetricName, number> {
  const d = onLine;
  const collapse = (p: readonly number[]) => p.filter((node, i) => i === 0 || node !== p[i - 1]);
  const [R, Q] = [collapse(reference), collapse(query)];
  const last = (p: readonly number[]) => p[p.length - 1];
  const length = (p: readonly number[]) => p.slice(1).reduce((total, node, i) => total + d(p[i], node), 0);
  const toPath = (n: number, p: readonly number[]) => Math.min(...p.map((node) => d(n, node)));
  const PL = length(Q);
  const NE = d(last(Q), last(R));
  const ONE = Math.min(...Q.map((q) => d(q, last(R))));
  const SR = NE <= dTh ? 1 : 0;
  const OSR = ONE <= dTh ? 1 : 0;
  const AD = Q.reduce((total, q) => total + toPath(q, R), 0) / Q.length;
  const MD = Math.max(...Q.map((q) => toPath(q, R)));
  const shortest = d(Q[0], last(R));
  const SPL = SR * (Math.max(PL, shortest) === 0 ? 1 : shortest / Math.max(PL, shortest));
  const steps = (p: readonly number[]) => p.slice(1).map((node, i) => `${p[i]}->${node}`);
  const [AR, AQ] = [steps(R), steps(Q)];
  const memo = new Map<string, number>();
  const ed = (i: number, j: number): number => {
    if (i === 0 || j === 0) return i + j;
    const key = `${i},${j}`;
    if (!memo.has(key)) memo.set(key, Math.min(ed(i - 1, j) + 1, ed(i, j - 1) + 1, ed(i - 1, j - 1) + (AR[i - 1] === AQ[j - 1] ? 0 : 1)));
    return memo.get(key)!;
  };
  const longest = Math.max(AR.length, AQ.length);
  const SED = SR * (longest === 0 ? 1 : 1 - ed(AR.length, AQ.length) / longest);
  const PC = R.reduce((total, r) => total + Math.exp(-toPath(r, Q) / dTh), 0) / R.length;
  const expected = PC * length(R);
  const LS = expected + Math.abs(expected - PL) === 0 ? 1 : expected / (expected + Math.abs(expected - PL));
  const CLS = PC * LS;
  let DTW = Infinity;
  const warp = (i: number, j: number, cost: number): void => {
    cost += d(R[i], Q[j]);
    if (i === R.length - 1 && j === Q.length - 1) DTW = Math.min(DTW, cost);
    if (i + 1 < R.length) warp(i + 1, j, cost);
    if (j + 1 < Q.length) warp(i, j + 1, cost);
    if (i + 1 < R.length && j + 1 < Q.length) warp(i + 1, j + 1, cost);
  };
  warp(0, 0, 0);
  const nDTW = Math.exp(-DTW / (R.length * dTh));
  return { PL, NE, ONE, SR, OSR, AD, MD, SPL, SED, CLS, nDTW, SDTW: SR * nDTW };
}

describe('the definitions, against a plain re-implementation (random paths on a line)', () => {
  test('M-11, M-12, M-13, M-14, M-15, M-16, M-17, M-18, M-19, M-20, M-21, M-22, M-23, M-24, M-25, M-26, M-27, M-28, M-45: every metric as the doc defines it, at any d_th', () => {
    const path = fc.array(fc.integer({ min: 0, max: 5 }), { minLength: 1, maxLength: 7 });
    const threshold = fc.oneof(fc.constantFrom(1, 2), fc.double({ min: 0.25, max: 4, noNaN: true }));
    fc.assert(
      fc.property(path, path, threshold, (reference, query, dTh) => {
        const expected = byTheBook(reference, query, dTh);
        const actual = pathMetrics(reference, query, onLine, dTh);
        for (const name of METRIC_NAMES) expect([name, actual[name]]).toEqual([name, expect.closeTo(expected[name], 12)]);
      }),
      { numRuns: 400 },
    );
  });
});

describe('paths', () => {
  const world = walledWorld();
  const d = new GeodesicDistance(world).between;

  test('M-7, M-9: poses can be passed as they are; nodes are compared through d, the heading is not looked at', () => {
    const poses: Pose[] = [
      { x: 1, y: 0, heading: 'NE' },
      { x: 1, y: 0, heading: 'E' }, // a rotation: the same cell
      { x: 1, y: 1, heading: 'E' },
      { x: 2, y: 2, heading: 'E' },
      { x: 2, y: 2, heading: 'SE' },
      { x: 3, y: 2, heading: 'SE' },
    ];
    const reference: Cell[] = [{ x: 1, y: 0 }, { x: 1, y: 1 }, { x: 2, y: 2 }, { x: 3, y: 2 }, { x: 3, y: 1 }, { x: 3, y: 0 }];
    // Fresh objects for the same cells: equal only through d.
    const cells = collapseRepeats(poses, d).map(({ x, y }) => ({ x, y }));
    expect(cells).toEqual([{ x: 1, y: 0 }, { x: 1, y: 1 }, { x: 2, y: 2 }, { x: 3, y: 2 }]);
    const metrics = pathMetrics(reference, poses, d, 1);
    expect(metrics).toEqual(pathMetrics(reference, cells, d, 1));
    expect(pathMetrics(poses, reference.map(({ x, y }) => ({ x, y })), d, 1)).toEqual(pathMetrics(cells, reference, d, 1));
    expect(metrics).toMatchObject({ PL: 3, NE: 2, ONE: 2, SR: 0, AD: 0, MD: 0 }); // it stops two short
  });

  test('M-10: a path that jumps between unreachable nodes is an error; a finite jump is not', () => {
    const shutIn = { x: 6, y: 0 };
    const jumping: Cell[] = [{ x: 4, y: 0 }, shutIn];
    const walking: Cell[] = [{ x: 3, y: 0 }, { x: 4, y: 0 }];
    expect(d(jumping[0], jumping[1])).toBe(Infinity);
    expect(() => pathMetrics(walking, jumping, d, 1)).toThrow(/jump between unreachable nodes/);
    expect(() => pathMetrics(jumping, walking, d, 1)).toThrow(RangeError);
    expect(() => pathLength(jumping, d)).toThrow(RangeError);
    expect(() => navigationError(walking, [shutIn, shutIn, { x: 4, y: 0 }], d)).toThrow(RangeError);
    // Without the check PL would be Infinity and SPL Infinity / Infinity = NaN.
    expect(pathMetrics([0, 3], [0, 5, 3], onLine, 1).PL).toBe(7); // finite jumps are any d's business
  });
});

describe('which metrics can be infinite (random paths on random maps with unreachable cells)', () => {
  const BOUNDED = ['SR', 'OSR', 'SPL', 'SED', 'CLS', 'nDTW', 'SDTW'] as const;
  const MAY_BE_INFINITE = ['NE', 'ONE', 'AD', 'MD'] as const;
  const STAY = HEADINGS.length;
  const JUMP = STAY + 1;

  /** Maps of 3 x 3 to 6 x 5 with a random share of water, hills and bushes: often split into components. */
  const world = fc
    .record({ width: fc.integer({ min: 3, max: 6 }), height: fc.integer({ min: 3, max: 5 }), terrain: fc.array(fc.constantFrom('G', 'P', 'W', 'H', 'D'), { minLength: 30, maxLength: 30 }) })
    .map(({ width, height, terrain }) => {
      const rows = Array.from({ length: height }, (_, y) => terrain.slice(y * width, (y + 1) * width).join(''));
      return buildWorld(mapSchema.parse({ format: 'cerealbar-map', version: 1, width, height, terrain: rows }));
    });
  const moves = fc.array(fc.tuple(fc.integer({ min: 0, max: JUMP }), fc.nat()), { maxLength: 12 });

  /**
   * A path from `start`: a move to a neighbour (`walkableOnly`: only a walkable one, as the engine
   * allows; else any, water included), a rotation, or (not `walkableOnly`) a jump to any cell.
   */
  function path(w: World, start: number, steps: readonly (readonly [number, number])[], walkableOnly: boolean): Cell[] {
    const table = neighbourTable(w.width, w.height);
    const size = w.width * w.height;
    let index = start % size;
    const cells = [cellAt(w, index)];
    for (const [move, target] of steps) {
      if (move === JUMP) {
        if (!walkableOnly) index = target % size;
      } else if (move !== STAY) {
        const next = table[index * HEADINGS.length + move];
        if (next >= 0 && (!walkableOnly || w.walkable[next])) index = next;
      }
      cells.push(cellAt(w, index));
    }
    return cells;
  }

  function expectBounded(metrics: Record<MetricName, number>): void {
    expect(Number.isFinite(metrics.PL)).toBe(true);
    for (const name of BOUNDED) {
      expect([name, Number.isFinite(metrics[name])]).toEqual([name, true]);
      expect(metrics[name]).toBeGreaterThanOrEqual(0);
      expect(metrics[name]).toBeLessThanOrEqual(1);
    }
    for (const name of MAY_BE_INFINITE) expect(metrics[name]).toBeGreaterThanOrEqual(0); // never NaN
  }

  test('M-36, M-10, M-30: for any paths, SPL, SED, CLS, nDTW, SDTW, SR and OSR are finite and in [0, 1]; only NE, ONE, AD, MD can be Infinity', () => {
    const seen = { rejected: 0, infinite: 0, finite: 0 };
    fc.assert(
      fc.property(world, fc.nat(), moves, fc.nat(), moves, fc.constantFrom(0.5, 1, 2), (w, referenceStart, referenceMoves, queryStart, queryMoves, dTh) => {
        const d = new GeodesicDistance(w).between;
        const reference = path(w, referenceStart, referenceMoves, false);
        const query = path(w, queryStart, queryMoves, false);
        const jumps = (p: Cell[]) => p.some((cell, i) => i > 0 && d(p[i - 1], cell) === Infinity);
        if (jumps(reference) || jumps(query)) {
          seen.rejected++;
          expect(() => pathMetrics(reference, query, d, dTh)).toThrow(RangeError);
          return;
        }
        const metrics = pathMetrics(reference, query, d, dTh);
        expectBounded(metrics);
        const goal = reference[reference.length - 1];
        const reachesNoneOf = (cell: Cell, nodes: Cell[]) => nodes.every((node) => d(cell, node) === Infinity);
        expect(metrics.NE === Infinity).toBe(d(query[query.length - 1], goal) === Infinity);
        expect(metrics.ONE === Infinity).toBe(reachesNoneOf(goal, query));
        const strays = query.some((q) => reachesNoneOf(q, reference));
        expect(metrics.AD === Infinity).toBe(strays);
        expect(metrics.MD === Infinity).toBe(strays);
        if (MAY_BE_INFINITE.some((name) => metrics[name] === Infinity)) seen.infinite++;
        else seen.finite++;
      }),
      { numRuns: 500 },
    );
    // The three cases all came up.
    expect(Math.min(seen.rejected, seen.infinite, seen.finite)).toBeGreaterThan(10);
  });

  test('M-36: for walks on walkable cells, NE, ONE, AD and MD are Infinity together, exactly when the query is in another component', () => {
    const seen = { apart: 0, together: 0 };
    fc.assert(
      fc.property(world, fc.nat(), moves, fc.nat(), moves, (w, referenceStart, referenceMoves, queryStart, queryMoves) => {
        const walkable = [...w.walkable.keys()].filter((i) => w.walkable[i]);
        fc.pre(walkable.length > 0);
        const d = new GeodesicDistance(w).between;
        const reference = path(w, walkable[referenceStart % walkable.length], referenceMoves, true);
        const query = path(w, walkable[queryStart % walkable.length], queryMoves, true);
        const metrics = pathMetrics(reference, query, d, DEFAULT_SUCCESS_THRESHOLD);
        expectBounded(metrics);
        const apart = d(reference[0], query[0]) === Infinity;
        for (const name of MAY_BE_INFINITE) expect([name, metrics[name] === Infinity]).toEqual([name, apart]);
        seen[apart ? 'apart' : 'together']++;
      }),
      { numRuns: 500 },
    );
    expect(Math.min(seen.apart, seen.together)).toBeGreaterThan(10);
  });
});

describe('the default threshold', () => {
  test('M-44: with d_th = 1, a follower succeeds on the end cell or one of its six neighbours, and nowhere else', () => {
    const open = buildWorld(
      mapSchema.parse({ format: 'cerealbar-map', version: 1, width: 9, height: 9, terrain: Array(9).fill('G'.repeat(9)) }),
    );
    const d = new GeodesicDistance(open).between;
    const end = { x: 4, y: 4 };
    const cells = Array.from({ length: 81 }, (_, i) => cellAt(open, i));
    const succeeding = cells.filter((cell) => successRate([{ x: 4, y: 2 }, end], [cell], d, DEFAULT_SUCCESS_THRESHOLD) === 1);
    expect(succeeding).toHaveLength(7);
    const neighbours = HEADINGS.map((_, h) => cellAt(open, neighbourTable(9, 9)[(4 * 9 + 4) * HEADINGS.length + h]));
    expect(new Set(succeeding.map(({ x, y }) => `${x},${y}`))).toEqual(new Set([end, ...neighbours].map(({ x, y }) => `${x},${y}`)));
  });
});
