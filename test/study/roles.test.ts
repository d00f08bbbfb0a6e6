/**
 * Who can lead and who can follow: what each role setting means, which roles nobody can come to
 * play, and the waiting workers who therefore get no partner (what `serve` and the admin page say).
 */
import { partnerShortages, roleSettingNote, rolesNobodyCanPlay } from '../../shared/study/roles';
import { studyFileSchema, type StudyFile } from '../../shared/study/studyFile';
import type { WorkerRecord, WorkerRole } from '../../shared/study/worker';
import { setPath, validStudy } from './fixtures';

const AT = '2026-05-01T10:00:00.000Z';

function study(roles: Record<string, unknown>): StudyFile {
  return studyFileSchema.parse(setPath(validStudy(), 'roles', roles));
}

/** A worker at the play step (waiting when `waiting`), or at `step`'s ending. */
function worker(participantId: string, role: WorkerRole, state: 'waiting' | 'play' | 'quiz' | 'done' | 'blocked' | 'playing' = 'play'): WorkerRecord {
  return {
    studyId: 'pilot-1',
    participantId,
    platform: 'prolific',
    platformIds: {},
    createdAt: AT,
    lastSeenAt: AT,
    consentedAt: AT,
    declinedAt: null,
    rulesReadAt: AT,
    tutorialPassedAt: { leader: AT, follower: AT },
    quiz: { attempts: 1, lastScore: 3, passedAt: state === 'quiz' ? null : AT },
    screenedOutAt: null,
    role,
    promotedAt: null,
    blocked: state === 'blocked' ? { at: AT, reason: null } : null,
    completion: state === 'done' ? { outcome: 'completed', code: 'CDONE1', issuedAt: AT } : null,
    waitingSince: state === 'waiting' ? AT : null,
    games: { played: 0, completed: 0, completedThisSession: 0, inProgress: state === 'playing' ? 1 : 0, points: 0, seconds: 0 },
  };
}

describe('the role setting in words', () => {
  test('either pairs any two new participants; follower and leader do not, and say what to do', () => {
    expect(roleSettingNote(study({ newWorkersStartAs: 'either', promotion: 'manual' }).roles)).toEqual({
      pairsNewWorkers: true,
      text: 'new participants may play either role (roles.newWorkersStartAs: either): each practises both, and any two are paired, one of them leading.',
    });
    const followers = roleSettingNote(study({ newWorkersStartAs: 'follower', promotion: 'manual' }).roles);
    expect(followers.pairsNewWorkers).toBe(false);
    expect(followers.text).toBe(
      'every new participant starts as a follower (roles.newWorkersStartAs: follower), and a game needs a leader: no game starts until you promote a worker to leader on the admin page. For any two participants to be paired, set roles.newWorkersStartAs: either.',
    );
    // A promotion rule cannot make the first leaders: it is said so.
    expect(roleSettingNote(study({ newWorkersStartAs: 'follower', promotion: { afterGames: 3, minMeanScore: 2 } }).roles).text).toContain(
      'The promotion rule (after 3 games as follower) cannot make the first leaders: those games need leaders.',
    );
    const leaders = roleSettingNote(study({ newWorkersStartAs: 'leader', promotion: 'manual' }).roles);
    expect([leaders.pairsNewWorkers, leaders.text]).toEqual([false, expect.stringMatching(/^every new participant starts as a leader .* nobody becomes a follower/)]);
  });

  test('a study file without roles pairs any two new participants', () => {
    const data = validStudy();
    delete data.roles;
    expect(studyFileSchema.parse(data).roles).toEqual({ newWorkersStartAs: 'either', promotion: 'manual' });
  });
});

describe('who can come to play', () => {
  const followersFirst = study({ newWorkersStartAs: 'follower', promotion: { afterGames: 3, minMeanScore: 2 } });

  test('followers first: nobody can lead until a worker who may lead, and can still play, exists', () => {
    expect(rolesNobodyCanPlay(followersFirst, [])).toEqual(['leader']);
    expect(rolesNobodyCanPlay(followersFirst, [worker('F1', 'follower', 'waiting')])).toEqual(['leader']);
    // Leaders whose sessions ended cannot come.
    expect(rolesNobodyCanPlay(followersFirst, [worker('L1', 'leader', 'done'), worker('L2', 'leader', 'blocked'), worker('E1', 'either', 'done')])).toEqual(['leader']);
    // A leader who has not reached play yet, one in a game, or a worker who may play either, can.
    expect(rolesNobodyCanPlay(followersFirst, [worker('L1', 'leader', 'quiz')])).toEqual([]);
    expect(rolesNobodyCanPlay(followersFirst, [worker('L1', 'leader', 'playing')])).toEqual([]);
    expect(rolesNobodyCanPlay(followersFirst, [worker('E1', 'either')])).toEqual([]);
  });

  test('leaders first: nobody can follow; either: every role can come', () => {
    expect(rolesNobodyCanPlay(study({ newWorkersStartAs: 'leader', promotion: 'manual' }), [worker('L1', 'leader', 'waiting')])).toEqual(['follower']);
    expect(rolesNobodyCanPlay(study({ newWorkersStartAs: 'either', promotion: 'manual' }), [worker('F1', 'follower', 'waiting'), worker('L1', 'leader', 'done')])).toEqual([]);
  });

  test('followers waiting with no leader able to come are named, with what to do; nothing when a leader can come', () => {
    const workers = [worker('F1', 'follower', 'waiting'), worker('F2', 'follower', 'waiting'), worker('F3', 'follower'), worker('L1', 'leader', 'done')];
    expect(partnerShortages(followersFirst, workers)).toEqual([
      {
        waiting: 'follower',
        participants: ['F1', 'F2'],
        message:
          '2 followers wait for a partner (F1, F2) and no leader can come: new participants start as followers and no worker who may lead can still play. Promote a worker to leader on the admin page, or set roles.newWorkersStartAs: either in the study file and restart the server.',
      },
    ]);
    expect(partnerShortages(followersFirst, [...workers, worker('L2', 'leader', 'quiz')])).toEqual([]);
    // Nobody waiting: no shortage (the role setting's note says the rest).
    expect(partnerShortages(followersFirst, [worker('F3', 'follower')])).toEqual([]);
  });

  test('the reverse: leaders waiting with no follower able to come', () => {
    const [shortage] = partnerShortages(study({ newWorkersStartAs: 'leader', promotion: 'manual' }), [worker('L1', 'leader', 'waiting')]);
    expect(shortage).toEqual({
      waiting: 'leader',
      participants: ['L1'],
      message:
        '1 leader waits for a partner (L1) and no follower can come: new participants start as leaders and no worker who may follow can still play. Set roles.newWorkersStartAs: either (or follower) in the study file and restart the server.',
    });
  });
});
