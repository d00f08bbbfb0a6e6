/**
 * Observations as text, for agents that read rather than see. The follower's: in the spirit of
 * LangNav (language as the perceptual representation), each thing in view is named with where it
 * lies relative to the follower ("2 hexes ahead, slightly to the left: a card with 3 red stars").
 * Directions are egocentric, measured from the follower's heading, because that is how a human
 * follower with a first-person camera thinks of them and how instructions are phrased.
 *
 * The text is a pure function of the observation (its known map included): no randomness, a fixed order
 * (nearest first, ties broken by angle then cell), integers only. It never describes a cell out of
 * view, except that it reports the map's edge right ahead (a human sees the border). The
 * leader's (`describeLeaderObservation`) names every card from both players' poses.
 */
import { describeCard, isValidSet, SET_SIZE, type Card } from '../engine/cards';
import type { InstructionStatus } from '../engine/playerView';
import { cellCentre, hexDistance, HEADING_DEGREES, stepFrom, type Cell, type Heading, type Pose } from '../engine/hex';
import { inBounds, isWalkable, buildWorld, stepTarget, terrainAt, type GameMap, type Prop } from '../engine/map';
import { mapFromKnown } from './observation';
import type { FollowerObservation, LeaderAgentCode, LeaderObservation } from './types';

export const COMPASS_WORDS: Readonly<Record<Heading, string>> = {
  NE: 'north-east', E: 'east', SE: 'south-east', SW: 'south-west', W: 'west', NW: 'north-west',
};

/** At most this many kinds of landmarks are listed: the nearest ones matter most, and text costs tokens. */
export const MAX_LANDMARK_GROUPS = 6;

/**
 * Where `cell` lies as seen from `pose`: degrees clockwise from the heading, in (-180, 180]
 * (negative is to the left). Measured between cell centres on the real hex layout.
 */
export function relativeBearing(pose: Pose, cell: Cell): number {
  const eye = cellCentre(pose);
  const centre = cellCentre(cell);
  const bearing = (Math.atan2(centre.x - eye.x, centre.z - eye.z) * 180) / Math.PI;
  let relative = bearing - HEADING_DEGREES[pose.heading];
  while (relative <= -180) relative += 360;
  while (relative > 180) relative -= 360;
  // Rounded so that mirror-image cells get exactly opposite bearings (ties then sort left first).
  return Math.round(relative * 1e6) / 1e6;
}

/**
 * Seven sectors each side, 30 degrees wide around the directions in which hex cells line up
 * (0, 30, 60, ... degrees). No cell centre lies on a sector boundary (an odd multiple of 15
 * degrees cannot be reached on the hex lattice), so rounding never decides a word.
 */
const SECTORS: readonly { readonly upTo: number; readonly words: (side: string, who: string) => string }[] = [
  { upTo: 15, words: () => 'straight ahead' },
  { upTo: 45, words: (side) => `ahead, slightly to the ${side}` },
  { upTo: 75, words: (side) => `ahead to the ${side}` },
  { upTo: 105, words: (side) => `to the ${side}` },
  { upTo: 135, words: (side, who) => `behind ${who} to the ${side}` },
  { upTo: 165, words: (side, who) => `behind ${who}, slightly to the ${side}` },
  { upTo: 180, words: (_, who) => `behind ${who}` },
];

/**
 * A relative bearing (degrees, negative to the left) in words: "ahead, slightly to the left".
 * `who` is the one at the pose, as the text calls it: "you" (the reader), or "it" (the follower, in the leader's text).
 */
export function directionWords(degrees: number, who = 'you'): string {
  const side = degrees < 0 ? 'left' : 'right';
  const sector = SECTORS.find(({ upTo }) => Math.abs(degrees) < upTo) ?? SECTORS[SECTORS.length - 1];
  return sector.words(side, who);
}

/** "where you stand", "1 hex straight ahead", "3 hexes behind you to the left" (with `who` "it": "where it stands", "behind it"). */
export function describeRelativePosition(pose: Pose, cell: Cell, who = 'you'): string {
  const distance = hexDistance(pose, cell);
  if (distance === 0) return who === 'you' ? 'where you stand' : `where ${who} stands`;
  return `${hexes(distance)} ${directionWords(relativeBearing(pose, cell), who)}`;
}

export function describeObservation(obs: FollowerObservation): string {
  // Everything described is in view (or the cell right ahead, always in view): seen, so known.
  const map = mapFromKnown(obs.map);
  return [
    statusLine(obs),
    `Instruction: ${instructionText(obs.instruction)}`,
    `Previous instruction: ${instructionText(obs.previousInstruction)}${obs.previousInstruction?.cancelled ? ' (cancelled by the leader)' : ''}`,
    ...feedbackLines(obs),
    ...visibleCardLines(obs),
    ...rememberedCardLines(obs),
    ...landmarkLines(obs, map),
    ...leaderLines(obs),
    wayAheadLine(obs.pose, map),
  ].join('\n');
}

function statusLine(obs: FollowerObservation): string {
  return (
    `You face ${COMPASS_WORDS[obs.pose.heading]}. You have ${count(obs.stepsLeft, 'step')} left in this turn ` +
    `and ${count(obs.turnsLeft, 'turn')} left in the game. The score is ${obs.score}.`
  );
}

function instructionText(instruction: FollowerObservation['instruction']): string {
  // One line per fact: an instruction's own line breaks would break the layout.
  return instruction ? instruction.text.replace(/\s+/g, ' ').trim() : 'none';
}

/** In a game with the leader's live feedback: its last signal in this turn, and how many came. */
function feedbackLines(obs: FollowerObservation): string[] {
  const signals = obs.feedback;
  if (!signals) return [];
  const last = signals.at(-1);
  if (!last) return ["The leader's feedback this turn: none yet."];
  const when = last.afterStep === 0 ? 'before your first step' : `after your ${ordinal(last.afterStep)} step`;
  const negative = signals.filter((feedback) => feedback.signal === 'negative').length;
  const tally = signals.length > 1 ? ` (${signals.length} signals this turn: ${signals.length - negative} positive, ${negative} negative)` : '';
  return [`The leader's last feedback: ${last.signal}, ${when} this turn${tally}.`];
}

function visibleCardLines(obs: FollowerObservation): string[] {
  if (obs.visibleCards.length === 0) return ['You see no cards.'];
  const cards = nearestFirst(obs.pose, obs.visibleCards);
  return [
    `Cards in view (${cards.length}):`,
    ...cards.map((card) => `- ${describeRelativePosition(obs.pose, card)}: ${cardWords(card)}.`),
  ];
}

function rememberedCardLines(obs: FollowerObservation): string[] {
  if (obs.rememberedCards.length === 0) return [];
  const cards = nearestFirst(obs.pose, obs.rememberedCards);
  return [
    `Cards you saw earlier, out of view now (${cards.length}):`,
    ...cards.map(
      (card) =>
        `- Earlier you saw ${cardWords(card)}, about ${describeRelativePosition(obs.pose, card)} ` +
        `(${count(card.seenAgo, 'move')} ago).`,
    ),
  ];
}

function cardWords(card: Card): string {
  return `a card with ${describeCard(card)}${card.selected ? ', selected' : ''}`;
}

/** The things besides cards that a human would point at: water, hills, paths and every prop. */
interface LandmarkGroup {
  readonly label: string;
  /** Water and path are spread over cells ("water on 3 hexes"); the others are counted ("3 trees"). */
  readonly mass: boolean;
  readonly cells: Cell[];
}

function landmarkLines(obs: FollowerObservation, map: GameMap): string[] {
  const groups = landmarkGroups(obs, map);
  if (groups.length === 0) return [];
  const shown = groups.slice(0, MAX_LANDMARK_GROUPS);
  const hidden = groups.length - shown.length;
  return [
    'Also in view:',
    ...shown.map((group) => `- ${landmarkWords(obs.pose, group)}.`),
    ...(hidden > 0 ? [`- and ${count(hidden, 'more kind')} of things further away.`] : []),
  ];
}

/** Visible landmarks grouped by label; groups and their cells nearest first. */
function landmarkGroups(obs: FollowerObservation, map: GameMap): LandmarkGroup[] {
  const props = new Map(map.props.map((prop) => [prop.y * map.width + prop.x, prop]));
  const groups = new Map<string, LandmarkGroup>();
  for (const cell of nearestFirst(obs.pose, obs.visibleCells)) {
    const landmark = landmarkAt(map, props.get(cell.y * map.width + cell.x), cell);
    if (!landmark) continue;
    const group = groups.get(landmark.label) ?? { ...landmark, cells: [] };
    group.cells.push(cell);
    groups.set(landmark.label, group);
  }
  // Insertion order is the order of each group's nearest cell.
  return [...groups.values()];
}

function landmarkAt(map: GameMap, prop: Prop | undefined, cell: Cell): { label: string; mass: boolean } | null {
  if (prop) return { label: propLabel(prop), mass: false };
  switch (terrainAt(map, cell)) {
    case 'water':
    case 'deep_water':
      return { label: 'water', mass: true };
    case 'path':
      return { label: 'path', mass: true };
    case 'hill':
      return { label: 'hill', mass: false };
    default:
      return null;
  }
}

/** Huts are told apart by colour ("the red hut"), a landmark instructions use; other variants are looks only. */
function propLabel(prop: Prop): string {
  return prop.type === 'hut' && /^[a-z]+$/.test(prop.variant) ? `${prop.variant} hut` : prop.type;
}

function landmarkWords(pose: Pose, group: LandmarkGroup): string {
  const nearest = describeRelativePosition(pose, group.cells[0]);
  const n = group.cells.length;
  if (group.mass) return n === 1 ? `${group.label} on 1 hex, ${nearest}` : `${group.label} on ${n} hexes, the nearest ${nearest}`;
  return n === 1 ? `${article(group.label)} ${group.label} ${nearest}` : `${n} ${group.label}s, the nearest ${nearest}`;
}

function leaderLines(obs: FollowerObservation): string[] {
  if (!obs.leader) return [];
  return [`The leader is ${describeRelativePosition(obs.pose, obs.leader)}, facing ${COMPASS_WORDS[obs.leader.heading]}.`];
}

/** Whether MF would move: the cell straight ahead is always in view. */
function wayAheadLine(pose: Pose, map: GameMap): string {
  const ahead = stepFrom(pose, pose.heading);
  if (!inBounds(map, ahead)) return 'The edge of the map is right ahead.';
  const world = buildWorld(map);
  if (stepTarget(world, pose, pose.heading)) return 'The way ahead is clear.';
  if (isWalkable(world, ahead)) return 'The way ahead is blocked by a cliff.';
  const prop = map.props.find((p) => p.x === ahead.x && p.y === ahead.y);
  // A cell that is not walkable holds a prop, water or a hill: always a landmark.
  const blocker = landmarkAt(map, prop, ahead)!;
  return `The way ahead is blocked by ${blocker.mass ? blocker.label : `${article(blocker.label)} ${blocker.label}`}.`;
}

/**
 * The leader's observation as text, for a language model in the leader's seat: the turn, both
 * players, every card with where it lies from the leader and from the follower (and whether the
 * follower sees it now), the selection and whether it can still make a set, the instructions so
 * far with how each stands, and what the leader may do now. Directions from the follower are the
 * follower's own (its heading), so that the leader can phrase instructions as the follower sees.
 * A pure function of the observation, like describeObservation.
 */
export function describeLeaderObservation(obs: LeaderObservation): string {
  return [
    leaderStatusLine(obs),
    `You face ${COMPASS_WORDS[obs.pose.heading]}. The follower is ${describeRelativePosition(obs.pose, obs.follower)}, facing ${COMPASS_WORDS[obs.follower.heading]}.`,
    ...leaderCardLines(obs),
    ...selectionLines(obs),
    ...instructionLines(obs),
    leaderLegalLine(obs),
  ].join('\n');
}

function leaderStatusLine(obs: LeaderObservation): string {
  const turn =
    obs.turn.role === 'leader'
      ? `It is your turn: you have ${count(obs.stepsLeft, 'step')} left.`
      : `It is the follower's turn: it has ${count(obs.turn.stepsLeft, 'step')} left.`;
  return `You are the leader. ${turn} There are ${count(obs.turnsLeft, 'turn')} left in the game. The score is ${obs.score}.`;
}

function leaderCardLines(obs: LeaderObservation): string[] {
  if (obs.cards.length === 0) return ['There are no cards on the board.'];
  const seen = new Set(obs.visibleToFollower);
  const fromFollower = (card: Card) =>
    `from the follower ${describeRelativePosition(obs.follower, card, 'it')}${seen.has(card.id) ? ', in its view' : ''}`;
  return [
    `Cards on the board (${obs.cards.length}), nearest to you first; the follower sees ${count(seen.size, 'of them', 'of them')} now:`,
    ...nearestFirst(obs.pose, obs.cards).map((card) => `- ${describeRelativePosition(obs.pose, card)}: ${cardWords(card)}; ${fromFollower(card)}.`),
  ];
}

function selectionLines(obs: LeaderObservation): string[] {
  const selected = obs.cards.filter((card) => card.selected);
  if (selected.length === 0) return ['No card is selected.'];
  const names = selected.map(describeCard).join(', ');
  if (obs.invalidCards.length > 0) {
    return [`Selected (${selected.length}): ${names}. They cannot be part of a valid set (two share a colour, shape or number): unselect one.`];
  }
  const lines = [`Selected (${selected.length}): ${names}. They can still be part of a valid set.`];
  if (selected.length === SET_SIZE - 1) {
    const completing = obs.cards.filter((card) => !card.selected && isValidSet([...selected, card]));
    lines.push(
      completing.length > 0
        ? `Cards that would complete the set: ${completing.map(describeCard).join(', ')}.`
        : 'No card on the board completes the set: unselect one of them.',
    );
  }
  return lines;
}

const INSTRUCTION_STATUS_WORDS: Readonly<Record<InstructionStatus, (shown: boolean) => string>> = {
  done: () => 'done',
  cancelled: () => 'cancelled by you',
  current: (shown) => (shown ? 'current, the follower is carrying it out' : 'current, the follower sees it from its next turn'),
  queued: () => 'queued',
};

function instructionLines(obs: LeaderObservation): string[] {
  if (obs.instructions.length === 0) return ['No instructions yet.'];
  return [
    `Instructions so far (${obs.instructions.length}), oldest first; done means the follower marked it finished:`,
    ...obs.instructions.map((instruction) => `- "${instructionText(instruction)}": ${INSTRUCTION_STATUS_WORDS[instruction.status](instruction.shown)}.`),
  ];
}

const CODE_WORDS: Readonly<Record<LeaderAgentCode, string>> = {
  MF: 'MF (forward)', MB: 'MB (back)', RL: 'RL (turn left)', RR: 'RR (turn right)', END: 'END (end your turn)',
};

function leaderLegalLine(obs: LeaderObservation): string {
  const allowed = obs.legal.map((code) => CODE_WORDS[code]);
  if (obs.canInstruct) allowed.push(`an instruction to the follower (at most ${count(obs.maxInstructionLength, 'character')})`);
  return allowed.length > 0 ? `You may now: ${allowed.join(', ')}.` : 'You may do nothing now.';
}

/** Nearest first; ties by angle from straight ahead (left before right), then by row and column. */
function nearestFirst<T extends Cell>(pose: Pose, cells: readonly T[]): T[] {
  const keyed = cells.map((cell) => ({ cell, distance: hexDistance(pose, cell), bearing: relativeBearing(pose, cell) }));
  keyed.sort(
    (a, b) =>
      a.distance - b.distance ||
      Math.abs(a.bearing) - Math.abs(b.bearing) ||
      a.bearing - b.bearing ||
      a.cell.y - b.cell.y ||
      a.cell.x - b.cell.x,
  );
  return keyed.map(({ cell }) => cell);
}

function hexes(n: number): string {
  return count(n, 'hex', 'hexes');
}

function count(n: number, singular: string, plural = `${singular}s`): string {
  return `${n} ${n === 1 ? singular : plural}`;
}

/** 1st, 2nd, 3rd, 4th, ..., 11th, 12th, 13th, ..., 21st. */
function ordinal(n: number): string {
  const tens = Math.floor(n / 10) % 10;
  const suffix = tens === 1 ? 'th' : ({ 1: 'st', 2: 'nd', 3: 'rd' } as Record<number, string>)[n % 10] ?? 'th';
  return `${n}${suffix}`;
}

function article(word: string): string {
  return /^[aeiou]/.test(word) ? 'an' : 'a';
}
