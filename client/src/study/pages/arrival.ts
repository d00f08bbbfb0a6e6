/**
 * The pages before a session: MTurk's preview of a HIT (what the study is, nothing recorded), a
 * link without the platform's ids, a lab's form for the participant's id, and a study that does
 * not exist.
 */
import type { PublicStudy } from '../../../../shared/study/studyFile';
import { h } from '../../ui/dom';
import { labIdProblem } from '../entry';
import { studyFacts } from './consent';
import { busy, platformName, studyFrame, type StudyFrame } from './frame';

export function mturkPreviewPage(study: PublicStudy): StudyFrame {
  return studyFrame(null, null, study.title, studyFacts(study), h('p', { class: 'accept-hit' }, h('strong', {}, 'Accept the HIT to start.')));
}

export function badLinkPage(study: PublicStudy, problem: string): StudyFrame {
  const platform = platformName(study.platform.kind);
  return studyFrame(
    study,
    null,
    'This link is not complete',
    h('p', { class: 'link-problem' }, problem),
    h('p', {}, `Please open the study again from ${platform}. If it happens again, contact the researchers through ${platform}.`),
  );
}

/** `studyId` is null when the address names no study at all. */
export function notFoundPage(studyId: string | null): StudyFrame {
  const what = studyId === null ? 'This address does not name a study.' : `There is no study called "${studyId}" on this site.`;
  return studyFrame(null, null, 'No study here', h('p', {}, `${what} Please check the link you were given.`));
}

/** The page could not load the study at all: no connection, or a server fault. */
export function unavailablePage(problem: string, retry: () => void): StudyFrame {
  const again = h('button', { type: 'button', class: 'retry' }, 'Try again');
  again.addEventListener('click', retry);
  return studyFrame(null, null, 'The study could not be opened', h('p', {}, problem), h('div', { class: 'study-actions' }, again));
}

/** The study takes no new participant for a moment (many arrived at once): the page tries again by itself after `seconds`. */
export function joinLaterPage(study: PublicStudy, seconds: number, retry: () => void): StudyFrame {
  const again = h('button', { type: 'button', class: 'retry' }, 'Try again now');
  again.addEventListener('click', retry);
  const wait = seconds < 90 ? `${Math.ceil(seconds)} seconds` : `${Math.ceil(seconds / 60)} minutes`;
  return studyFrame(study, null, 'Many people are starting the study', h('p', {}, `Many participants are starting this study at the same moment. This page tries again by itself in ${wait}: keep it open.`), h('div', { class: 'study-actions' }, again));
}

/** A lab's start: the id the experimenter gives, checked as the server checks it. */
export function labIdPage(study: PublicStudy, start: (participantId: string) => Promise<void>): StudyFrame {
  if (study.platform.kind !== 'lab') throw new Error('the participant id form is for a lab study');
  const { participantIdLabel, participantIdPattern } = study.platform;
  const hint = h('p', { class: 'field-problem', id: 'participant-id-problem' });
  const input = h('input', { type: 'text', id: 'participant-id', name: 'participantId', autocomplete: 'off', spellcheck: 'false', required: true, 'aria-describedby': hint.id });
  const button = h('button', { type: 'submit', class: 'start' }, 'Start');
  const form = h('form', { class: 'lab-id', novalidate: true }, h('label', { for: input.id }, participantIdLabel), h('div', { class: 'row' }, input, button), hint);
  const frame = studyFrame(study, null, 'Start the study', h('p', {}, study.description), h('p', {}, 'Type the id the experimenter gave you, then press Start.'), form);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const problem = labIdProblem(input.value, participantIdPattern);
    hint.textContent = problem ?? '';
    input.setAttribute('aria-invalid', String(problem !== null));
    if (problem) return input.focus();
    void busy(frame, [button], () => start(input.value.trim()));
  });
  return frame;
}
