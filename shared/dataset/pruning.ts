/**
 * The CerealBar paper's pruning of its collected games (appendix: 1,526 collected, 1,202 kept),
 * as named rules. The paper names what it removed, not its thresholds: "games where no
 * instructions were complete", "a low proportion of instructions being marked as complete", and
 * "very long action sequences from the follower". The thresholds here are options; their defaults
 * are this project's choice (docs/data.md): a follower action sequence is "very long" beyond the
 * longest the paper kept (50, Table 3's maximum), and a proportion is low under one half.
 */
import type { GameRecords } from './records';

export const PRUNING_RULES = ['no-completed-instruction', 'low-completion-rate', 'long-action-sequence'] as const;
export type PruningRule = (typeof PRUNING_RULES)[number];

export interface PruningOptions {
  /** Rules to apply; none keeps every game. */
  readonly rules: readonly PruningRule[];
  /** `low-completion-rate`: the least share of written instructions the follower must have marked done. */
  readonly minCompletionRate: number;
  /** `long-action-sequence`: the most follower moves for one instruction. */
  readonly maxActionsPerInstruction: number;
}

export const DEFAULT_PRUNING: PruningOptions = { rules: PRUNING_RULES, minCompletionRate: 0.5, maxActionsPerInstruction: 50 };

/** The first rule (in PRUNING_RULES order) that removes the game, or null when it is kept. */
export function prunedBy(game: GameRecords, options: PruningOptions): PruningRule | null {
  const { num_instructions: written, num_completed: completed } = game.game;
  const checks: Record<PruningRule, () => boolean> = {
    'no-completed-instruction': () => completed === 0,
    'low-completion-rate': () => written > 0 && completed / written < options.minCompletionRate,
    'long-action-sequence': () => game.instructions.some((instruction) => instruction.num_actions > options.maxActionsPerInstruction),
  };
  return PRUNING_RULES.find((rule) => options.rules.includes(rule) && checks[rule]()) ?? null;
}
