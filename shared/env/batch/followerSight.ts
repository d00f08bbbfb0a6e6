/**
 * What the follower sees and remembers, written into a batch's observation grids: the cells in its
 * view, the terrain, props and walls as it first sees them, and the cards as last seen with their
 * ages, per environment, as ObservationTracker and FollowerArrays give them. The grids change only
 * where the follower looked or remembers, so an observation costs its view, not the map.
 */
import { UNSEEN } from '../../engine/playerView';
import { GRID_CODES, TERRAIN_CODE } from '../observationArrays';
import type { MapTables } from './tables';

const CARD_CHANNELS = GRID_CODES.cardChannels.length;
const UNSEEN_CODE = TERRAIN_CODE[UNSEEN];
/** `cardAt`'s mark for a cell without a card. */
export const NO_CARD = -1;

/** The observation grids the sight writes, with a leading axis of N environments. */
export interface SightGrids {
  readonly terrain: Uint8Array;
  readonly props: Uint8Array;
  readonly walls: Uint8Array;
  readonly cards: Uint8Array;
  readonly visible: Uint8Array;
  readonly cardSeenAgo: Int32Array;
}

/** The batch's cards as the sight reads them: per cell (`slot · gridCells + cell`) the card's index there or NO_CARD; per card (`slot · stride + k`) its face (3 codes) and selection. */
export interface SightCards {
  readonly cardAt: Int16Array;
  readonly cardFace: Uint8Array;
  readonly cardSelected: Uint8Array;
  readonly stride: number;
}

export class FollowerSight {
  /** Cells seen this episode, per cell. */
  private readonly seen: Uint8Array;
  /**
   * The cards in memory, `memoryCount[slot]` of them from `slot · gridCells` on: each one's map
   * cell, its place in the grids, and the move count when it was last seen. Kept as a list (and
   * each cell's place in it, -1 none) because every move ages them all.
   */
  private readonly memoryList: Int32Array;
  private readonly memoryAt: Int32Array;
  private readonly memorySince: Int32Array;
  private readonly memoryCount: Int32Array;
  private readonly memoryPlace: Int32Array;
  /** Moves that changed the follower's pose: the clock of the cards' ages. */
  private readonly moves: Int32Array;
  /** The pose at the last observation; cell -1 before the first. */
  private readonly lastCell: Int32Array;
  private readonly lastHeading: Uint8Array;

  constructor(
    size: number,
    private readonly gridCells: number,
    private readonly grids: SightGrids,
    private readonly cards: SightCards,
  ) {
    const cells = size * gridCells;
    this.seen = new Uint8Array(cells);
    this.memoryList = new Int32Array(cells);
    this.memoryAt = new Int32Array(cells);
    this.memorySince = new Int32Array(cells);
    this.memoryCount = new Int32Array(size);
    this.memoryPlace = new Int32Array(cells).fill(-1);
    this.moves = new Int32Array(size);
    this.lastCell = new Int32Array(size).fill(-1);
    this.lastHeading = new Uint8Array(size);
  }

  /** A new episode in `slot`: the follower has seen nothing yet. */
  restart(slot: number): void {
    const cells = slot * this.gridCells;
    this.seen.fill(0, cells, cells + this.gridCells);
    this.memoryPlace.fill(-1, cells, cells + this.gridCells);
    this.memoryCount[slot] = 0;
    this.moves[slot] = 0;
    this.lastCell[slot] = -1;
  }

  /** The follower of environment `slot`, on `tables`' map at map cell `cell` facing `heading` (an index of HEADINGS), observes. */
  observe(slot: number, tables: MapTables, cell: number, heading: number): void {
    const out = this.grids;
    const { gridIndex } = tables.size;
    const { start, cells: viewCells } = tables.size.view;
    const grid = slot * this.gridCells;
    const cells = slot * this.gridCells;
    // The grids of the follower's view and cards change only where it looked or remembers: the
    // previous view is cleared, except at an episode's first observation, which clears them all.
    const shown = this.lastCell[slot] * 6 + this.lastHeading[slot];
    if (this.lastCell[slot] < 0) {
      this.clearMap(slot, tables);
      out.visible.fill(0, grid, grid + this.gridCells);
      out.cards.fill(0, grid * CARD_CHANNELS, (grid + this.gridCells) * CARD_CHANNELS);
      out.cardSeenAgo.fill(-1, grid, grid + this.gridCells);
    } else {
      for (let v = start[shown]; v < start[shown + 1]; v++) out.visible[grid + gridIndex[viewCells[v]]] = 0;
    }
    const moved = this.remember(slot, tables, cell, heading);
    const pose = cell * 6 + heading;
    for (let v = start[pose]; v < start[pose + 1]; v++) out.visible[grid + gridIndex[viewCells[v]]] = 1;
    // A move ages every remembered card out of view; without one, only the cards seen now changed
    // (remember wrote them). A card in view was seen at this very move count, so its age is 0.
    if (moved) {
      const moves = this.moves[slot];
      for (let m = cells; m < cells + this.memoryCount[slot]; m++) out.cardSeenAgo[this.memoryAt[m]] = moves - this.memorySince[m];
    }
  }

  /** Remembers what the follower sees now, as ObservationTracker does at each observation. */
  private remember(slot: number, tables: MapTables, cell: number, heading: number): boolean {
    const out = this.grids;
    const grid = slot * this.gridCells;
    const { gridIndex } = tables.size;
    const first = this.lastCell[slot] < 0;
    const moved = !first && (this.lastCell[slot] !== cell || this.lastHeading[slot] !== heading);
    if (moved) this.moves[slot]++;
    this.lastCell[slot] = cell;
    this.lastHeading[slot] = heading;
    const cells = slot * this.gridCells;
    const { start, cells: viewCells } = tables.size.view;
    const pose = cell * 6 + heading;
    const { cardAt, cardFace, cardSelected } = this.cards;
    const cardFirst = slot * this.cards.stride;
    for (let v = start[pose]; v < start[pose + 1]; v++) {
      const seen = cells + viewCells[v];
      if (!this.seen[seen]) {
        this.seen[seen] = 1;
        this.reveal(slot, tables, viewCells[v]);
      }
      const card = cardAt[seen];
      let place = this.memoryPlace[seen];
      if (card === NO_CARD) {
        if (place >= 0) this.forget(slot, viewCells[v]);
        continue;
      }
      const k = cardFirst + card;
      const at = grid + gridIndex[viewCells[v]];
      if (place < 0) {
        place = this.memoryPlace[seen] = this.memoryCount[slot]++;
        this.memoryList[cells + place] = viewCells[v];
        this.memoryAt[cells + place] = at;
      }
      this.memorySince[cells + place] = this.moves[slot];
      // The card grids are the memory's faces: a card's cell there changes only when it is seen.
      out.cards[at * CARD_CHANNELS] = cardFace[k * 3];
      out.cards[at * CARD_CHANNELS + 1] = cardFace[k * 3 + 1];
      out.cards[at * CARD_CHANNELS + 2] = cardFace[k * 3 + 2];
      out.cards[at * CARD_CHANNELS + 3] = cardSelected[k];
      out.cardSeenAgo[at] = 0;
    }
    return moved || first;
  }

  /**
   * The terrain, props and walls the follower knows, before it saw anything: off-map past the map's
   * edges, unseen on it. `reveal` then writes each cell as the follower first sees it (so no one
   * else may write into these grids).
   */
  private clearMap(slot: number, tables: MapTables): void {
    const out = this.grids;
    const { gridIndex } = tables.size;
    const grid = slot * this.gridCells;
    out.terrain.fill(0, grid, grid + this.gridCells);
    out.props.fill(0, grid, grid + this.gridCells);
    out.walls.fill(0, grid, grid + this.gridCells);
    for (let c = 0; c < gridIndex.length; c++) out.terrain[grid + gridIndex[c]] = UNSEEN_CODE;
  }

  /** Map cell `cell`, seen for the first time: its terrain and prop, and the walls on either side of which it lies. */
  private reveal(slot: number, tables: MapTables, cell: number): void {
    const out = this.grids;
    const { gridIndex } = tables.size;
    const grid = slot * this.gridCells;
    out.terrain[grid + gridIndex[cell]] = tables.terrain[cell];
    out.props[grid + gridIndex[cell]] = tables.props[cell];
    const { walls, wallsAt } = tables;
    for (let i = wallsAt.start[cell]; i < wallsAt.start[cell + 1]; i++) {
      const w = wallsAt.walls[i];
      out.walls[grid + gridIndex[walls[w]]] |= walls[w + 1];
      const there = walls[w + 2];
      if (there >= 0) out.walls[grid + gridIndex[there]] |= walls[w + 3];
    }
  }

  /** The card remembered on map cell `cell` is gone: out of the memory and of the card grids. */
  private forget(slot: number, cell: number): void {
    const cells = slot * this.gridCells;
    const place = this.memoryPlace[cells + cell];
    const at = this.memoryAt[cells + place];
    // The last in the list takes its place.
    const last = cells + --this.memoryCount[slot];
    this.memoryList[cells + place] = this.memoryList[last];
    this.memoryAt[cells + place] = this.memoryAt[last];
    this.memorySince[cells + place] = this.memorySince[last];
    this.memoryPlace[cells + this.memoryList[last]] = place;
    this.memoryPlace[cells + cell] = -1;
    this.grids.cards.fill(0, at * CARD_CHANNELS, (at + 1) * CARD_CHANNELS);
    this.grids.cardSeenAgo[at] = -1;
  }
}
