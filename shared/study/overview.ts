/**
 * A study at a glance, for the researcher's admin page: its workers by step, who waits for a
 * partner and for how long (and whether a partner can come at all), how many sessions ended with
 * the completed code, and its games' totals (by arm, in a study with arms). Pure: the server computes it from the worker store's
 * records.
 */
import { partnerShortages, roleSettingNote, rolesNobodyCanPlay, waitsForPartner, type PartnerShortage } from './roles';
import type { PlatformKind, StudyFile } from './studyFile';
import { WORKER_STEPS, workerStep, type WorkerRecord, type WorkerRole, type WorkerStep } from './worker';

export interface GameTotals {
  readonly games: number;
  readonly live: number;
  readonly meanScore: number | null;
  readonly meanSeconds: number | null;
}

/** One arm's draws and games in a study, each game once, as the worker store counts them (WorkerStore.armTotals). */
export interface ArmTotals {
  readonly arm: string;
  /** Draws of the arm; those whose game never started are `drawn - games`. */
  readonly drawn: number;
  /** Games started. */
  readonly games: number;
  /** Started and not ended. */
  readonly live: number;
  /** Ended, for any reason but a player leaving. */
  readonly ended: number;
  /** Ended by a player leaving (or losing its connection for good). */
  readonly abandoned: number;
}

/** An arm of the study with its games so far: `share` is its weight over the sum of the weights. */
export interface ArmOverview extends Omit<ArmTotals, 'arm'> {
  readonly id: string;
  readonly agent: string;
  readonly weight: number;
  readonly share: number;
}

export interface StudyOverview {
  readonly id: string;
  readonly title: string;
  readonly platform: PlatformKind;
  readonly pool: string;
  /** For each worker's bonus (shared/study/bonus.ts). */
  readonly pay: StudyFile['pay'];
  readonly workers: { readonly total: number; readonly byStep: Readonly<Record<WorkerStep, number>> };
  /** Workers waiting for a partner now: asked to play, no game started since, no ending yet. */
  readonly waiting: readonly { readonly participantId: string; readonly role: WorkerRole; readonly seconds: number }[];
  /** Waiting workers whom no partner can come to (followers and no leader able to play, or the reverse), with what to do. */
  readonly shortages: readonly PartnerShortage[];
  /** While a role nobody can come to play makes every game wait: what the role setting means, and what to do; null otherwise. */
  readonly rolesProblem: string | null;
  /**
   * Of the workers who passed the quiz (so could play), how many have the completed code now;
   * `rate` is completed / reachedPlay, null before anyone reached play.
   */
  readonly completion: { readonly reachedPlay: number; readonly completed: number; readonly rate: number | null };
  readonly games: GameTotals;
  /** A study with arms: each arm (in the study file's order) and its games; null for a study without. */
  readonly arms: readonly ArmOverview[] | null;
}

export function studyOverview(study: StudyFile, workers: readonly WorkerRecord[], games: GameTotals, now: number, armCounts: readonly ArmTotals[] = []): StudyOverview {
  const byStep = Object.fromEntries(WORKER_STEPS.map((step) => [step, 0])) as Record<WorkerStep, number>;
  for (const worker of workers) byStep[workerStep(worker)]++;
  const waiting = workers
    .filter(waitsForPartner)
    .map((worker) => ({ participantId: worker.participantId, role: worker.role, seconds: Math.max(0, Math.round((now - Date.parse(worker.waitingSince!)) / 1000)) }))
    .sort((a, b) => b.seconds - a.seconds);
  const reachedPlay = workers.filter((worker) => worker.quiz.passedAt !== null).length;
  const completed = workers.filter((worker) => worker.quiz.passedAt !== null && worker.completion?.outcome === 'completed').length;
  return {
    id: study.id,
    title: study.title,
    platform: study.platform.kind,
    pool: study.pool,
    pay: { ...study.pay },
    workers: { total: workers.length, byStep },
    waiting,
    shortages: partnerShortages(study, workers),
    rolesProblem: rolesNobodyCanPlay(study, workers).length > 0 ? roleSettingNote(study.roles).text : null,
    completion: { reachedPlay, completed, rate: reachedPlay === 0 ? null : completed / reachedPlay },
    games,
    arms: study.arms ? armsOverview(study.arms, armCounts) : null,
  };
}

function armsOverview(arms: NonNullable<StudyFile['arms']>, counts: readonly ArmTotals[]): ArmOverview[] {
  const weights = arms.reduce((sum, arm) => sum + arm.weight, 0);
  return arms.map((arm) => {
    const { drawn = 0, games = 0, live = 0, ended = 0, abandoned = 0 } = counts.find((count) => count.arm === arm.id) ?? {};
    return { id: arm.id, agent: arm.agent, weight: arm.weight, share: arm.weight / weights, drawn, games, live, ended, abandoned };
  });
}
