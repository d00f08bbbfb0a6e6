/** Game configuration: the paper's constants as defaults, each overridable and validated. */
import { z } from 'zod';
import type { WorldRules } from './map';

export const configSchema = z.strictObject({
  /** Ψ_l: steps in a leader turn. */
  leaderSteps: z.number().int().min(1).max(100).default(5),
  /** Ψ_f: steps in a follower turn. */
  followerSteps: z.number().int().min(1).max(100).default(10),
  /** Turns each player starts with. */
  turnsPerPlayer: z.number().int().min(1).max(1000).default(6),
  /** Extra turns for each player after the 1st, 2nd, ... set; 0 after the schedule ends (the original's). */
  extraTurns: z.array(z.number().int().min(0).max(100)).max(1000).default([5, 4, 4, 3, 3, 2, 2, 1, 1, 1]),
  /** Cards on the board. */
  cardCount: z.number().int().min(3).max(200).default(21),
  /**
   * The original disables End Turn while the queue is empty; rule 3 is then reached by the
   * leader's timeout. Set true to let End Turn itself skip the follower's turn.
   */
  endTurnWithEmptyQueue: z.boolean().default(false),
  /** Seconds in a turn before it times out (the original's 45 s for the leader, 15 s for the follower). */
  turnSeconds: z
    .strictObject({
      leader: z.number().positive().max(3600).default(45),
      follower: z.number().positive().max(3600).default(15),
    })
    .prefault({}),
  /** Longest instruction, in characters. */
  maxInstructionLength: z.number().int().min(1).max(10_000).default(300),
  /**
   * Most instructions in the queue, the current one included; null for no cap (the paper's, and
   * that of logs written before the cap). Real games queue a handful; 50 bounds a game's memory
   * and log without ever stopping a person.
   */
  maxQueuedInstructions: z.number().int().min(1).max(10_000).nullable().default(50),
  /** Hill cells are walkable (CB2's mountain tops and ramps); CerealBar's hills are obstacles. */
  walkableHills: z.boolean().default(false),
  /** Cards may lie on the map's outer ring (CB2); CerealBar keeps them off it. */
  cardsOnEdge: z.boolean().default(false),
  /** The leader may send live feedback (a positive or negative signal) during the follower's turn (CB2). */
  liveFeedback: z.boolean().default(false),
  /** The leader may cancel the follower's instructions during its turn, which ends the round (CB2). */
  cancelInstructions: z.boolean().default(false),
  /** The follower's view: a cone of this full angle and this range in hexes. */
  view: z
    .strictObject({
      fovDegrees: z.number().min(1).max(360).default(120),
      range: z.number().int().min(0).max(50).default(5),
    })
    .prefault({}),
});

export type GameConfig = z.output<typeof configSchema>;
export type GameConfigInput = z.input<typeof configSchema>;

/** Fills in defaults and validates; throws a ZodError naming the bad field. */
export function makeConfig(overrides: GameConfigInput = {}): GameConfig {
  return configSchema.parse(overrides);
}

export const DEFAULT_CONFIG: GameConfig = makeConfig();

/**
 * Named sets of rules. `cerealbar` is the paper's (the defaults); `cb2` is CB2's as its logs show
 * it (docs/data.md): seven rounds before any set (its turns_left counts 6 down to 0), no extra turn
 * for a tenth set, walkable mountain tops and ramps, cards on the outer ring, the clocks of the
 * recorded games, and the leader's live feedback and cancellation. Walls between cells come with the map, not the profile.
 */
export const RULES_PROFILES = {
  cerealbar: {},
  cb2: {
    turnsPerPlayer: 7,
    extraTurns: [5, 4, 4, 3, 3, 2, 2, 1, 1],
    walkableHills: true,
    cardsOnEdge: true,
    turnSeconds: { leader: 60, follower: 180 },
    liveFeedback: true,
    cancelInstructions: true,
  },
} as const satisfies Record<string, GameConfigInput>;
export type RulesProfile = keyof typeof RULES_PROFILES;

/** A profile's config, with `overrides` on top. */
export function profileConfig(profile: RulesProfile, overrides: GameConfigInput = {}): GameConfig {
  const base: GameConfigInput = RULES_PROFILES[profile];
  return makeConfig({ ...base, ...overrides, turnSeconds: { ...base.turnSeconds, ...overrides.turnSeconds } });
}

/** The part of a config that decides where players walk and cards lie. */
export function worldRulesOf(config: GameConfig): WorldRules {
  return { walkableHills: config.walkableHills, cardsOnEdge: config.cardsOnEdge };
}
