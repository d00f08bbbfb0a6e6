/**
 * The consent form: what the study is, what it pays and how long it takes, the researcher's form
 * (Markdown), and the choice. Declining is final (the server records it), so the page says so.
 */
import type { PublicStudy } from '../../../../shared/study/studyFile';
import { h } from '../../ui/dom';
import { durationText, payText } from '../format';
import { markdownElement } from '../markdown';
import { busy, studyFrame, type StudyFrame } from './frame';

export function consentPage(study: PublicStudy, answer: (agree: boolean) => Promise<void>): StudyFrame {
  const agree = h('button', { type: 'button', class: 'agree' }, 'I agree to take part');
  const decline = h('button', { type: 'button', class: 'secondary decline' }, 'I do not agree');
  const frame = studyFrame(
    study,
    'consent',
    'Consent to take part',
    studyFacts(study),
    h('section', { class: 'consent-form', 'aria-label': 'Consent form' }, markdownElement(study.consent)),
    h('p', {}, 'If you do not agree, the study ends here and nothing more is asked of you.'),
    h('div', { class: 'study-actions' }, agree, decline),
  );
  agree.addEventListener('click', () => void busy(frame, [agree, decline], () => answer(true)));
  decline.addEventListener('click', () => void busy(frame, [agree, decline], () => answer(false)));
  return frame;
}

/** The study in a few lines: its description, its pay, how long it takes. Also on MTurk's preview. */
export function studyFacts(study: PublicStudy): HTMLElement {
  return h(
    'div',
    { class: 'study-facts' },
    h('p', {}, study.description),
    h(
      'dl',
      {},
      h('dt', {}, 'Pay'),
      h('dd', {}, payText(study.pay)),
      h('dt', {}, 'Time'),
      h('dd', {}, `At most ${durationText(study.time.sessionMinutes * 60)}, including a short practice game and a quiz.`),
    ),
  );
}
