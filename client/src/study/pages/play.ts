/**
 * The play step before a game: the role the server gave the worker, what happens while waiting for
 * a partner (in a study with arms nobody waits, and the page claims no other person), the games
 * played and the pay so far, and the button that asks for a seat.
 */
import type { PublicStudy } from '../../../../shared/study/studyFile';
import type { PublicWorker } from '../../../../shared/study/worker';
import { h } from '../../ui/dom';
import { durationText, earningsLines } from '../format';
import { gameStartSentence } from '../rulesWords';
import { busy, studyFrame, type StudyFrame } from './frame';

export function playPage(study: PublicStudy, worker: PublicWorker, findPartner: () => Promise<void>): StudyFrame {
  const button = h('button', { type: 'button', class: 'find-partner' }, 'Find a partner');
  const played = worker.games.played;
  const role = worker.role === 'either' ? 'the leader or the follower (whichever seat is free)' : `the ${worker.role}`;
  const earned = earningsLines(worker.earnings);
  const { partnerIsPerson } = study.game;
  const seeks = partnerIsPerson ? 'the study looks for another participant to play with you' : 'the study finds you a partner';
  const noPartner = ` If nobody arrives within ${durationText(study.time.waitForPartnerSeconds)}, the study ends and you get your completion code.`;
  const frame = studyFrame(
    study,
    'play',
    played === 0 ? 'Ready to play' : 'Play another game',
    worker.quiz.passed && played === 0 ? h('p', { class: 'quiz-passed' }, 'You passed the quiz.') : null,
    h('p', {}, `You will play as ${role}. When you press Find a partner, ${seeks}.`),
    h('p', {}, `${gameStartSentence(study.game)}${partnerIsPerson ? noPartner : ''}`),
    played > 0
      ? h('p', { class: 'games-so-far' }, `Games played so far: ${played}. Your pay so far: ${earned.base} base pay and a bonus of ${earned.bonus}.`)
      : null,
    h('div', { class: 'study-actions' }, button),
  );
  button.addEventListener('click', () => void busy(frame, [button], findPartner));
  return frame;
}
