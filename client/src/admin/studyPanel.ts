/**
 * One study on the admin page: its totals (by arm, in a study with arms), who waits for a partner and for how long (and a warning
 * when no partner can come), the games being played (each watched live in the replay viewer), the
 * downloads, every game of the study with its replay, and the workers with Promote and Block.
 * Redrawn from the server's answers each time the page refreshes.
 */
import { bonusFor } from '../../../shared/study/bonus';
import type { StudyOverview } from '../../../shared/study/overview';
import { END_REASON_WORDS } from '../replay/status';
import { formatMoney } from '../study/format';
import { h } from '../ui/dom';
import type { AdminApi, AdminGame, AdminWorker } from './api';

export interface StudyActions {
  readonly api: AdminApi;
  /** After a change: the page fetches everything again. */
  readonly changed: () => void;
  /** A failed request, in words. */
  readonly failed: (message: string) => void;
}

const minutes = (seconds: number | null) => (seconds === null ? '-' : `${(seconds / 60).toFixed(1)} min`);

const replayUrl = (gameId: string) => `/replay/?game=${encodeURIComponent(gameId)}`;
const watchLink = (gameId: string) => h('a', { href: `${replayUrl(gameId)}&live=1`, class: 'watch' }, 'Watch live');

/** `own`: the study's own games, as the server lists them (GET /api/studies/:id/games), not every game of its pool. */
export function studyPanel(study: StudyOverview, workers: readonly AdminWorker[], own: readonly AdminGame[], actions: StudyActions): HTMLElement {
  const { completion, games } = study;
  const live = own.filter((game) => game.endedAt === null);
  const totals = h(
    'dl',
    { class: 'admin-totals' },
    ...[
      ['Workers', String(study.workers.total)],
      ['Games', `${games.games} (${games.live} being played)`],
      ['Mean score', games.meanScore === null ? '-' : games.meanScore.toFixed(2)],
      ['Time per game', minutes(games.meanSeconds)],
      ['Completion rate', completion.rate === null ? '-' : `${Math.round(completion.rate * 100)}% (${completion.completed} of ${completion.reachedPlay} who passed the quiz)`],
    ].flatMap(([term, value]) => [h('dt', {}, term), h('dd', {}, value)]),
  );
  const steps = h('p', { class: 'admin-steps' }, `By step: ${Object.entries(study.workers.byStep).filter(([, count]) => count > 0).map(([step, count]) => `${step} ${count}`).join(', ') || 'none yet'}`);
  const waiting = h(
    'section',
    { class: 'admin-waiting', 'aria-label': `Waiting for a partner in ${study.id}` },
    h('h3', {}, 'Waiting for a partner'),
    study.waiting.length === 0
      ? h('p', {}, 'Nobody is waiting.')
      : h('ul', {}, ...study.waiting.map((worker) => h('li', {}, `${worker.participantId} (${worker.role}): ${worker.seconds} s`))),
  );
  const liveGames = h(
    'section',
    { class: 'admin-live' },
    h('h3', {}, 'Games being played'),
    live.length === 0
      ? h('p', {}, 'None.')
      : h(
          'ul',
          {},
          ...live.map((game) =>
            h('li', {}, `${game.gameId}, score ${game.score}, since ${new Date(game.startedAt).toLocaleTimeString()} `, watchLink(game.gameId)),
          ),
        ),
  );
  const download = (label: string, path: string, name: string) =>
    h('button', { type: 'button', class: 'secondary', onclick: () => actions.api.download(path, name).catch((error: Error) => actions.failed(error.message)) }, label);
  const downloads = h(
    'p',
    { class: 'admin-downloads' },
    download('Bonus sheet for Prolific', `/api/studies/${study.id}/bonuses.csv?format=prolific`, `${study.id}-bonuses-prolific.csv`),
    download('Bonus sheet for MTurk', `/api/studies/${study.id}/bonuses.csv?format=mturk`, `${study.id}-bonuses-mturk.csv`),
    download('All logs (.tar.gz)', `/api/studies/${study.id}/logs.tar.gz`, `${study.id}-logs.tar.gz`),
  );
  return h(
    'section',
    { class: 'admin-study', 'data-study': study.id, 'aria-labelledby': `study-${study.id}` },
    h('h2', { id: `study-${study.id}` }, `${study.title} `, h('span', { class: 'admin-id' }, `${study.id} · ${study.platform} · pool ${study.pool}`)),
    totals,
    ...(study.arms ? [armsTable(study.id, study.arms)] : []),
    steps,
    ...problems(study),
    h('div', { class: 'admin-columns' }, waiting, liveGames),
    downloads,
    gamesTable(study, own),
    workersTable(study, workers, actions),
  );
}

/** A study's arms: each one's agent and weight, and its games now (being played, ended, abandoned; drawn for a seat never taken). */
function armsTable(studyId: string, arms: NonNullable<StudyOverview['arms']>): HTMLElement {
  const head = ['Arm', 'Agent', 'Weight', 'Being played', 'Ended', 'Abandoned', 'Drawn, no game'];
  const rows = arms.map((arm) =>
    h(
      'tr',
      { 'data-arm': arm.id },
      h('th', { scope: 'row' }, arm.id),
      h('td', {}, h('code', {}, arm.agent)),
      h('td', {}, `${arm.weight} (${Math.round(arm.share * 100)}%)`),
      h('td', {}, String(arm.live)),
      h('td', {}, String(arm.ended)),
      h('td', {}, String(arm.abandoned)),
      h('td', {}, String(arm.drawn - arm.games)),
    ),
  );
  return h(
    'div',
    { class: 'admin-table admin-arms', role: 'region', 'aria-label': `Arms of ${studyId}`, tabindex: 0 },
    h('table', {}, h('caption', {}, `Arms (the agents partnering the participants, one drawn for each game)`), h('thead', {}, h('tr', {}, ...head.map((title) => h('th', { scope: 'col' }, title)))), h('tbody', {}, ...rows)),
  );
}

/** Workers who wait for a partner nobody can come to be, or a role nobody can play: what it means and what to do. */
function problems(study: StudyOverview): HTMLElement[] {
  const lines = study.shortages.length > 0 ? study.shortages.map((shortage) => shortage.message) : study.rolesProblem === null ? [] : [`No game can start: ${study.rolesProblem}`];
  return lines.map((line) => h('p', { class: 'admin-problem' }, h('strong', {}, 'Warning: '), line));
}

/** Every game of the study, newest first: who played which role, the score, how it ended, and its replay. */
function gamesTable(study: StudyOverview, games: readonly AdminGame[]): HTMLElement {
  const player = (game: AdminGame, role: 'leader' | 'follower') => game.seats.find((seat) => seat.role === role)?.workerId ?? '-';
  const rows = games.map((game) =>
    h(
      'tr',
      { 'data-game': game.gameId },
      h('th', { scope: 'row' }, game.gameId),
      h('td', {}, new Date(game.startedAt).toLocaleString()),
      h('td', {}, player(game, 'leader')),
      h('td', {}, player(game, 'follower')),
      h('td', {}, String(game.score)),
      h('td', {}, game.endedAt === null ? 'playing' : `finished${game.endReason === null ? '' : `: ${END_REASON_WORDS[game.endReason]}`}`),
      h('td', {}, game.endedAt === null ? watchLink(game.gameId) : h('a', { href: replayUrl(game.gameId), class: 'replay' }, 'Replay')),
    ),
  );
  const head = ['Game', 'Started', 'Leader', 'Follower', 'Score', 'State', 'Replay'];
  return h(
    'div',
    { class: 'admin-table admin-games', role: 'region', 'aria-label': `Games of ${study.id}`, tabindex: 0 },
    h('table', {}, h('caption', {}, `Games (${games.length})`), h('thead', {}, h('tr', {}, ...head.map((title) => h('th', { scope: 'col' }, title)))), h('tbody', {}, ...rows)),
  );
}

function workersTable(study: StudyOverview, workers: readonly AdminWorker[], actions: StudyActions): HTMLElement {
  const act = (run: () => Promise<void>) => () => void run().then(actions.changed, (error: Error) => actions.failed(error.message));
  const rows = workers.map((worker) => {
    // In a study with arms the participants keep their role: there is no one to promote.
    const promote =
      worker.role === 'leader' || worker.blocked || study.arms
        ? null
        : h('button', {
            type: 'button',
            class: 'secondary promote',
            'aria-label': `Promote ${worker.participantId} to leader`,
            onclick: act(async () => {
              if (confirm(`Promote ${worker.participantId} to leader? They pass the leader's tutorial before their next game.`)) await actions.api.promote(study.id, worker.participantId);
            }),
          }, 'Promote');
    const block = worker.blocked
      ? null
      : h('button', {
          type: 'button',
          class: 'secondary block',
          'aria-label': `Block ${worker.participantId}`,
          onclick: act(async () => {
            const reason = prompt(`Block ${worker.participantId} from the study? Why (for your records):`);
            if (reason !== null) await actions.api.block(study.id, worker.participantId, reason.trim());
          }),
        }, 'Block');
    return h(
      'tr',
      { 'data-participant': worker.participantId },
      h('th', { scope: 'row' }, worker.participantId),
      h('td', {}, worker.step),
      h('td', {}, worker.role + (worker.promotedAt ? ' (promoted)' : '')),
      h('td', {}, worker.quiz.lastScore === null ? 'not taken' : `${worker.quiz.lastScore} right, ${worker.quiz.attempts} attempt${worker.quiz.attempts === 1 ? '' : 's'}`),
      h('td', {}, `${worker.games.played}${worker.games.inProgress > 0 ? ' + 1 now' : ''}`),
      h('td', {}, String(worker.games.points)),
      h('td', {}, formatMoney(bonusFor(study.pay, worker.games.points), study.pay.currency)),
      h('td', {}, worker.completion ? `${worker.completion.outcome} ${worker.completion.code}` : '-'),
      h('td', {}, worker.blocked ? `blocked${worker.blocked.reason ? `: ${worker.blocked.reason}` : ''}` : '-'),
      h('td', { class: 'admin-actions' }, promote, block),
    );
  });
  const head = ['Participant', 'Step', 'Role', 'Quiz', 'Games', 'Points', 'Bonus', 'Completion', 'Blocked', 'Actions'];
  return h(
    'div',
    { class: 'admin-table', role: 'region', 'aria-label': `Workers of ${study.id}`, tabindex: 0 },
    h('table', {}, h('caption', {}, `Workers (${workers.length})`), h('thead', {}, h('tr', {}, ...head.map((title) => h('th', { scope: 'col' }, title)))), h('tbody', {}, ...rows)),
  );
}
