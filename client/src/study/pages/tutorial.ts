/** Before the practice game: which role it teaches, what to expect, and the button that starts it. */
import type { Role } from '../../../../shared/engine/state';
import type { PublicStudy } from '../../../../shared/study/studyFile';
import { h } from '../../ui/dom';
import { busy, studyFrame, type StudyFrame } from './frame';

export function tutorialIntroPage(study: PublicStudy, role: Role, start: () => Promise<void>): StudyFrame {
  const button = h('button', { type: 'button', class: 'tutorial-start' }, `Start the ${role}'s practice game`);
  const partner = role === 'leader' ? 'follower' : 'leader';
  const frame = studyFrame(
    study,
    'tutorial',
    `Practice as the ${role}`,
    h(
      'p',
      {},
      `Before you play with a person, practise as the ${role} with a computer ${partner}. The steps to do are listed on the right of the game; each one is ticked off when you have done it. `,
      'The practice game has no time limit and pays nothing extra; it ends when every step is done.',
    ),
    h(
      'p',
      {},
      role === 'leader'
        ? 'Move with the arrow keys, write instructions in the box on the right, and press End turn to let the follower carry them out.'
        : 'Read the instruction on the right, move with the arrow keys (↑ forward, ↓ back, ← and → to turn), and press Done (or the D key) when you have done what it says.',
    ),
    h('div', { class: 'study-actions' }, button),
  );
  button.addEventListener('click', () => void busy(frame, [button], start));
  return frame;
}

/** After the practice game, when recording it failed: Continue tries again. */
export function tutorialDonePage(study: PublicStudy, role: Role, save: () => Promise<void>): StudyFrame {
  const again = h('button', { type: 'button', class: 'continue' }, 'Continue');
  const frame = studyFrame(study, 'tutorial', 'Practice done', h('p', {}, `You know how to play as the ${role}.`), h('div', { class: 'study-actions' }, again));
  again.addEventListener('click', () => void busy(frame, [again], save));
  return frame;
}
