/** Leader policies that see only the leader's view, for the environments' tests and reference trajectories. */
import { describeCard, isValidSet, type Card } from '../../shared/engine/cards';
import { hexDistance, type Cell } from '../../shared/engine/hex';
import type { PlayerView } from '../../shared/engine/playerView';
import { Draw, seedRng } from '../../shared/engine/rng';
import { LEADER_AGENT_CODES, type LeaderAgentAction } from '../../shared/agents/types';

export type Policy = (view: PlayerView) => LeaderAgentAction;


export function randomPolicy(seed: number): Policy {
  const draw = new Draw(seedRng(seed));
  return () => (draw.chance(0.1) ? { instruction: 'get the 1 red star' } : draw.pick(LEADER_AGENT_CODES));
}

/** The three unselected cards that make a set and lie nearest `cell` (by their farthest card), or none. */
function nearestSet(cards: readonly Card[], cell: Cell): Card[] {
  const open = cards.filter((card) => !card.selected);
  let best: { set: Card[]; distance: number } | null = null;
  for (let i = 0; i < open.length; i++) {
    for (let j = i + 1; j < open.length; j++) {
      for (let k = j + 1; k < open.length; k++) {
        const set = [open[i], open[j], open[k]];
        const distance = Math.max(...set.map((card) => hexDistance(card, cell)));
        if (isValidSet(set) && (!best || distance < best.distance)) best = { set, distance };
      }
    }
  }
  return best?.set ?? [];
}

/**
 * A leader that only talks: with nothing queued it asks the follower to unselect stray cards and
 * to get the three cards of the set nearest it, one instruction per step, then ends its turn.
 */
export function tellingPolicy(): Policy {
  let pending: string[] = [];
  return (view) => {
    const queued = view.instructions.some((instruction) => instruction.status !== 'done');
    if (pending.length === 0 && !queued) {
      const stray = view.cards.filter((card) => card.selected).map((card) => `unselect the ${describeCard(card)}`);
      pending = [...stray, ...nearestSet(view.cards, view.follower).map((card) => `get the ${describeCard(card)}`)];
    }
    const next = pending.shift();
    if (next) return { instruction: next };
    return view.legal.endTurn ? 'END' : 'RR';
  };
}
