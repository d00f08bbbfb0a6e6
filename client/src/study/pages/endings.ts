/**
 * The endings: the completion page (the code, the pay so far, and the hand-back to the platform),
 * declining, and being blocked. The hand-back: on Prolific the page goes to the study's completion
 * URL after a few seconds, with a link to go at once; on MTurk a form posts the assignment to
 * MTurk (the page is in MTurk's frame), by itself after a few seconds or with its button; in a lab
 * the participant tells the experimenter, who may start the page again for the next participant.
 */
import type { PublicStudy } from '../../../../shared/study/studyFile';
import type { CompletionOutcome } from '../../../../shared/study/studyFile';
import type { PublicWorker } from '../../../../shared/study/worker';
import { h } from '../../ui/dom';
import { earningsLines } from '../format';
import { platformName, studyFrame, type StudyFrame } from './frame';

/** Seconds before the page hands the worker back to Prolific or MTurk by itself. */
export const HANDBACK_SECONDS = 5;

const OUTCOMES: Readonly<Record<CompletionOutcome, { heading: string; text: string }>> = {
  completed: { heading: 'Thank you: you have finished', text: "You played the study's games to the end." },
  partnerLeft: { heading: 'Your partner left the game', text: 'The game could not go on without them, so the study ends here for you. Thank you for taking part.' },
  noPartner: { heading: 'No partner was free', text: 'Nobody was free to play with you in time, so the study ends here. Thank you for waiting.' },
  screenedOut: { heading: 'The quiz was not passed', text: 'You did not give enough right answers to play in this study, so it ends here. Thank you for your time.' },
};

/** `newParticipant` (a lab only) lets the experimenter start the page again for someone else; so on every ending. */
export function completionPage(study: PublicStudy, worker: PublicWorker, newParticipant: (() => void) | null): StudyFrame {
  const completion = worker.completion;
  if (!completion) throw new Error('the completion page needs a completion code');
  const outcome = OUTCOMES[completion.outcome];
  const earned = earningsLines(worker.earnings);
  return studyFrame(
    study,
    null,
    outcome.heading,
    h('p', {}, outcome.text),
    h('p', { class: 'completion-code' }, 'Your completion code: ', h('span', { class: 'code', 'data-code': completion.code }, completion.code)),
    h(
      'dl',
      { class: 'earnings' },
      h('dt', {}, 'Base pay'),
      h('dd', {}, earned.base),
      h('dt', {}, 'Bonus so far'),
      h('dd', {}, `${earned.bonus} (paid after the study)`),
      h('dt', {}, 'Total'),
      h('dd', {}, earned.total),
    ),
    handBack(study, completion, newParticipant),
  );
}

function handBack(study: PublicStudy, completion: NonNullable<PublicWorker['completion']>, newParticipant: (() => void) | null): HTMLElement {
  const code = completion.code;
  const url = completion.url && isHttps(completion.url) ? completion.url : null;
  if (study.platform.kind === 'prolific' && url) {
    // Prolific does not frame its studies: a plain navigation of this window.
    setTimeout(() => location.assign(url), HANDBACK_SECONDS * 1000);
    return h(
      'div',
      { class: 'hand-back' },
      h('p', {}, `You will be taken back to Prolific in ${HANDBACK_SECONDS} seconds, with your code.`),
      h('p', {}, h('a', { class: 'button-link prolific-return', href: url }, 'Go back to Prolific now')),
    );
  }
  const submit = completion.mturkSubmit;
  if (study.platform.kind === 'mturk' && submit && isHttps(submit.action)) {
    const form = h(
      'form',
      { class: 'hand-back mturk-submit', method: 'post', action: submit.action },
      h('input', { type: 'hidden', name: 'assignmentId', value: submit.assignmentId }),
      h('input', { type: 'hidden', name: 'completionCode', value: code }),
      h('p', {}, `Your work is sent to MTurk in ${HANDBACK_SECONDS} seconds. You can also send it now:`),
      h('button', { type: 'submit' }, 'Submit the HIT'),
    );
    setTimeout(() => form.requestSubmit(), HANDBACK_SECONDS * 1000);
    return form;
  }
  if (study.platform.kind === 'lab') {
    return h(
      'div',
      { class: 'hand-back' },
      h('p', {}, 'Please tell the experimenter that you have finished, and show them this code.'),
      restartButton(newParticipant),
    );
  }
  return h('p', { class: 'hand-back' }, `Please enter this code on ${platformName(study.platform.kind)}.`);
}

export function declinedPage(study: PublicStudy, newParticipant: (() => void) | null): StudyFrame {
  const where = study.platform.kind === 'lab' ? 'Please tell the experimenter.' : `Please return the ${study.platform.kind === 'mturk' ? 'HIT' : 'study'} on ${platformName(study.platform.kind)}, so that someone else can take your place.`;
  return studyFrame(study, null, 'You declined', h('p', {}, `You chose not to take part, so the study ends here. ${where}`), h('p', {}, 'Thank you for your time.'), restartButton(newParticipant));
}

export function blockedPage(study: PublicStudy, newParticipant: (() => void) | null): StudyFrame {
  const contact = study.platform.kind === 'lab' ? 'please tell the experimenter' : `please contact the researchers through ${platformName(study.platform.kind)}`;
  return studyFrame(study, null, 'You cannot take part in this study', h('p', {}, `The researchers have closed this study to you. If you think this is a mistake, ${contact}.`), restartButton(newParticipant));
}

/** In a lab, for the experimenter: the page starts again with the id form. */
function restartButton(newParticipant: (() => void) | null): HTMLElement | null {
  return newParticipant && h('button', { type: 'button', class: 'secondary new-participant', onclick: newParticipant }, 'Start again with another participant id');
}

function isHttps(address: string): boolean {
  try {
    return new URL(address).protocol === 'https:';
  } catch {
    return false;
  }
}
