/**
 * Who can lead and who can follow in a study's games: what the study's role setting means, in
 * words for the researcher, and whether workers waiting for a partner can get one at all. A game
 * needs a leader and a follower; a study that starts everyone as followers has no leader until the
 * researcher promotes one (a promotion rule needs games as follower first, which need leaders).
 * Pure: the commands, `serve` and the admin page say what these return.
 */
import type { Role } from '../engine/state';
import type { StudyFile } from './studyFile';
import { workerStep, type WorkerRecord, type WorkerRole, type WorkerStep } from './worker';

/** The study's role setting (roles in the study file), as read. */
export type RoleSetting = StudyFile['roles'];

const mayPlay = (workerRole: WorkerRole, role: Role) => workerRole === 'either' || workerRole === role;

/** Steps after which a worker plays no more games in its session. */
const ENDED_STEPS: ReadonlySet<WorkerStep> = new Set<WorkerStep>(['done', 'declined', 'screenedOut', 'blocked']);

/** A worker who asked for a game and waits for a partner now. */
export function waitsForPartner(worker: WorkerRecord): boolean {
  return worker.waitingSince !== null && worker.games.inProgress === 0 && workerStep(worker) === 'play';
}

/**
 * What the role setting means for pairing, in plain words; `pairsNewWorkers` when any two new
 * participants make a game, or (`withArms`: a study with arms) every participant gets a game.
 */
export function roleSettingNote(roles: RoleSetting, withArms = false): { readonly pairsNewWorkers: boolean; readonly text: string } {
  if (withArms) {
    const role = roles.newWorkersStartAs;
    return { pairsNewWorkers: true, text: `every participant plays ${role} (roles.newWorkersStartAs: ${role}), and each game's other seat is an agent of one of the study's arms, drawn for the game.` };
  }
  const toPair = 'For any two participants to be paired, set roles.newWorkersStartAs: either.';
  switch (roles.newWorkersStartAs) {
    case 'either':
      return {
        pairsNewWorkers: true,
        text: 'new participants may play either role (roles.newWorkersStartAs: either): each practises both, and any two are paired, one of them leading.',
      };
    case 'follower': {
      const rule =
        roles.promotion === 'manual'
          ? ''
          : ` The promotion rule (after ${roles.promotion.afterGames} games as follower) cannot make the first leaders: those games need leaders.`;
      return {
        pairsNewWorkers: false,
        text: `every new participant starts as a follower (roles.newWorkersStartAs: follower), and a game needs a leader: no game starts until you promote a worker to leader on the admin page.${rule} ${toPair}`,
      };
    }
    case 'leader':
      return {
        pairsNewWorkers: false,
        text: `every new participant starts as a leader (roles.newWorkersStartAs: leader) and nobody becomes a follower: no game starts except with followers who joined under an earlier setting. ${toPair}`,
      };
  }
}

/**
 * The roles nobody can come to play: no new participant may (by the setting), and no worker
 * whose session has not ended may. A game needing such a role cannot start. In a study with arms
 * an agent always plays the role its participants do not.
 */
export function rolesNobodyCanPlay(study: StudyFile, workers: readonly WorkerRecord[]): Role[] {
  if (study.arms) return [];
  return (['leader', 'follower'] as const).filter(
    (role) => !mayPlay(study.roles.newWorkersStartAs, role) && !workers.some((worker) => mayPlay(worker.role, role) && !ENDED_STEPS.has(workerStep(worker))),
  );
}

/** Workers of one role waiting for a partner that nobody can come to be, with what to do. */
export interface PartnerShortage {
  readonly waiting: Role;
  readonly participants: readonly string[];
  readonly message: string;
}

/** The waiting workers who cannot get a partner (followers with no leader able to come, or the reverse). */
export function partnerShortages(study: StudyFile, workers: readonly WorkerRecord[]): PartnerShortage[] {
  const missing = rolesNobodyCanPlay(study, workers);
  return missing.flatMap((role) => {
    const waiting: Role = role === 'leader' ? 'follower' : 'leader';
    const participants = workers.filter((worker) => worker.role === waiting && waitsForPartner(worker)).map((worker) => worker.participantId);
    if (participants.length === 0) return [];
    const who = participants.length === 1 ? `1 ${waiting} waits` : `${participants.length} ${waiting}s wait`;
    const todo =
      role === 'leader'
        ? 'Promote a worker to leader on the admin page, or set roles.newWorkersStartAs: either in the study file and restart the server.'
        : 'Set roles.newWorkersStartAs: either (or follower) in the study file and restart the server.';
    return [
      {
        waiting,
        participants,
        message: `${who} for a partner (${participants.join(', ')}) and no ${role} can come: new participants start as ${study.roles.newWorkersStartAs}s and no worker who may ${role === 'leader' ? 'lead' : 'follow'} can still play. ${todo}`,
      },
    ];
  });
}
