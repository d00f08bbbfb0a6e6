/**
 * The draw of a game's arm: permuted blocks. The study's draws are numbered 0, 1, 2, ... by the
 * worker store, which hands out each number once, in one transaction, whichever process asks
 * (WorkerStore.drawArm). Draws come in blocks of `sum of weights / their greatest common divisor`;
 * each block holds every arm `weight / divisor` times, in an order shuffled by a generator seeded
 * from the study id, its arms and the block's number. So:
 *
 * - the arm of draw k is a function of the study file and k alone: the store's count reproduces
 *   every draw, after a restart and across processes, and a report can check it;
 * - the split is exactly the weights' at the end of every block and never further from them than
 *   one block within it (a deficit rule would be closer, but its next arm is known from the counts
 *   so far; within a block, the next arm cannot be told from the earlier ones with certainty);
 * - draws whose game never started (a seat never taken, an agent that could not start) keep their
 *   number and arm: the balance is over draws, and the store says which draws had no game.
 */
import { hashString } from '../../shared/agents/builtin';
import { Draw, seedRng } from '../../shared/engine/rng';
import type { Arm } from '../../shared/study/arms';

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

/** The arms of one block of draws, in their drawn order. */
export function armBlock(studyId: string, arms: readonly Arm[], block: number): Arm[] {
  const divisor = arms.reduce((g, arm) => gcd(g, arm.weight), 0);
  const slots = arms.flatMap((arm) => Array.from({ length: arm.weight / divisor }, () => arm));
  const design = `${studyId}:${arms.map((arm) => `${arm.id}*${arm.weight}`).join(',')}:${block}`;
  return new Draw(seedRng(hashString(design))).shuffled(slots);
}

/** The arm of the study's draw number `draw` (0 the first). */
export function armOfDraw(studyId: string, arms: readonly Arm[], draw: number): Arm {
  const size = armBlock(studyId, arms, 0).length;
  return armBlock(studyId, arms, Math.floor(draw / size))[draw % size];
}
