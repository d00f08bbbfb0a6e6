/**
 * What a game room is made with: the services of the process that runs it, and the settings of
 * its games (`serve`'s flags, a study's seed, tests).
 */
import { z } from 'zod';
import { RULES_PROFILES, type GameConfig, type RulesProfile } from '../../shared/engine/config';
import type { GameMap } from '../../shared/engine/map';
import { MAX_SEED } from '../../shared/engine/state';
import type { makeHeader } from '../../shared/log/recorder';
import { DEFAULT_PATCH_RATE_MS, type JoinOptions } from '../../shared/protocol/messages';
import type { GameMetrics } from '../metrics';
import type { GameLogWriter, SeatRecord } from '../store/types';
import type { SeatAgentStarter } from './seatAgents';
import type { StudyGameHooks } from './studySeats';

/** What the room needs from the process that runs it. */
export interface RoomServices {
  startLog(header: ReturnType<typeof makeHeader>, info: { pool: string; seats: SeatRecord[] }): GameLogWriter;
  /** The clock for deadlines and the log's times (epoch ms); Date.now unless a test fixes it. */
  now?(): number;
  /** The studies' side of their games (server/study/studyGames.ts); none without studies. */
  studies?: StudyGameHooks;
  /** The server's metrics (served at /metrics); none in most tests. */
  metrics?: GameMetrics;
  /** Starts the agent a player asks for as its partner (botFollower, botLeader); the built-in scripted ones by default. */
  seatAgents?: SeatAgentStarter;
}

export const roomSettingsSchema = z.object({
  /** Override the config's turn seconds (`serve --leader-seconds`, tests). */
  leaderTurnSeconds: z.number().positive().max(3600).optional(),
  followerTurnSeconds: z.number().positive().max(3600).optional(),
  /** How long a dropped player's seat is kept. */
  reconnectSeconds: z.number().min(0).max(3600).default(30),
  /** Milliseconds between an agent's actions (botFollower, botLeader), so that a human partner can follow them. */
  botStepMs: z.number().int().min(0).max(10_000).default(400),
  /** Milliseconds between Colyseus's ticks (the turn clock's resolution). */
  patchRateMs: z.number().int().min(5).max(1000).default(DEFAULT_PATCH_RATE_MS),
  /** Fixes the game's seed (tests, studies): the map's, and the draw of start poses and cards. */
  seed: z.number().int().min(0).max(MAX_SEED).optional(),
  /** Plays on this map instead of a generated one. */
  map: z.custom<GameMap>().optional(),
  /** The rules profile of the games (`serve --rules`), which their log headers name; `config` is made from it (the profile's own when left out). */
  rules: z.enum(Object.keys(RULES_PROFILES) as [RulesProfile, ...RulesProfile[]]).default('cerealbar'),
  config: z.custom<GameConfig>().optional(),
});
export type RoomSettings = z.input<typeof roomSettingsSchema>;

/** The rules a game is played by: the profile its log header names, and the config made from it. */
export interface GameRules {
  readonly profile: RulesProfile;
  readonly config: GameConfig;
}
export type ParsedRoomSettings = z.output<typeof roomSettingsSchema>;

/**
 * Options (a join's, or a room's at its creation) as their own fields only, in an object with no
 * prototype: nothing is read through inheritance, so a prototype that Colyseus's merge of a
 * client's options into the room's could set (an own `__proto__` key) never becomes state.
 * Anything but a plain object is answered as it is, for the schemas to refuse in their words.
 */
export function ownFields<T>(options: T): T {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) return options;
  const own = Object.create(null) as Record<string, unknown>;
  for (const key of Object.keys(options)) own[key] = (options as Record<string, unknown>)[key];
  return own as T;
}

/** An option's own value (never an inherited one), or undefined. */
export function ownOption(options: unknown, name: string): unknown {
  return typeof options === 'object' && options !== null && Object.hasOwn(options, name) ? (options as Record<string, unknown>)[name] : undefined;
}

export interface GameRoomOptions extends Partial<JoinOptions> {
  services: RoomServices;
  settings?: RoomSettings;
}
