/**
 * The server's LLM budget (`serve --llm-max-calls-total`, `--llm-max-cost`): what the LLM agent
 * partners of all its games may spend together over the process's life, since each game's own
 * limit (`--llm-max-calls`) bounds nothing once anyone may start games. Every game's LLM agent
 * spends from it; once it is reached a new game with the LLM agent is refused at matchmaking
 * (rooms/agentGames.ts) and an agent in a game in play stops calling (P-150). The operator is
 * told once, when 80% of it is used.
 */
import { RunSpend, type SpendLimits } from '../shared/agents/node/llm/agent';

/** The share of the budget used at which the operator is told. */
export const LLM_BUDGET_ALERT_SHARE = 0.8;

/** The budget the limits set (none without a limit), which says once through `warn` when 80% of it is used. */
export function serverLlmBudget(limits: SpendLimits, warn: (line: string) => void): RunSpend | null {
  const { maxCalls, maxCost } = limits;
  if (maxCalls === undefined && maxCost === undefined) return null;
  const budget = new RunSpend(limits, "the server's");
  let told = false;
  budget.watch(() => {
    if (told || budget.used < LLM_BUDGET_ALERT_SHARE) return;
    told = true;
    const used = [
      ...(maxCalls === undefined ? [] : [`${budget.calls} of ${maxCalls} calls (--llm-max-calls-total)`]),
      ...(maxCost === undefined ? [] : [`$${budget.spent.toFixed(4)} of $${maxCost} (--llm-max-cost)`]),
    ];
    warn(
      `the LLM agents have used ${Math.round(LLM_BUDGET_ALERT_SHARE * 100)}% of the server's LLM budget: ${used.join(', ')}; at the limit new games with them are refused and games in play go on without their calls`,
    );
  });
  return budget;
}
