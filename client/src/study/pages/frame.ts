/**
 * What every page of a study shares: the study's title, where the worker is among the steps, the
 * page's heading, its content, and a line that says what went wrong (an answer refused, no
 * connection). Buttons that ask the server are disabled while it answers.
 */
import type { PublicStudy } from '../../../../shared/study/studyFile';
import { h } from '../../ui/dom';
import { StudyApiError } from '../api';

/** The steps a worker goes through, in order, as the progress line names them. */
const STEPS = [
  ['consent', 'Consent'],
  ['rules', 'How to play'],
  ['tutorial', 'Practice'],
  ['quiz', 'Quiz'],
  ['play', 'Play'],
] as const;
export type FrameStep = (typeof STEPS)[number][0];

export interface StudyFrame {
  readonly element: HTMLElement;
  readonly heading: HTMLElement;
  /** Shows what went wrong under the content, or clears it (null). */
  say(problem: string | null): void;
}

export function studyFrame(study: PublicStudy | null, step: FrameStep | null, heading: string, ...content: (Node | string | null)[]): StudyFrame {
  const problem = h('p', { class: 'error-text study-problem', role: 'alert' });
  const index = STEPS.findIndex(([name]) => name === step);
  const title = h('h1', { tabindex: -1 }, heading);
  const element = h(
    'main',
    { class: 'study' },
    study || index >= 0
      ? h('div', { class: 'study-header' }, study ? h('p', { class: 'study-title' }, study.title) : null, index >= 0 ? h('p', { class: 'study-progress' }, `Step ${index + 1} of ${STEPS.length}: ${STEPS[index][1]}`) : null)
      : null,
    title,
    ...content,
    problem,
  );
  return { element, heading: title, say: (text) => (problem.textContent = text ?? '') };
}

/** Puts the page on screen, with `problem` said on it; keyboard and screen-reader users start at its heading. */
export function showFrame(app: HTMLElement, frame: StudyFrame, studyTitle: string | null, problem: string | null = null): void {
  app.replaceChildren(frame.element);
  frame.say(problem);
  const heading = frame.heading.textContent ?? '';
  document.title = studyTitle && studyTitle !== heading ? `${heading} · ${studyTitle}` : heading;
  window.scrollTo(0, 0);
  frame.heading.focus();
}

/** Thrown once the flow has shown another page instead (an ending, the step the server says): nothing more to say here. */
export class PageLeft extends Error {
  constructor() {
    super('the page was left');
    this.name = 'PageLeft';
  }
}

/** A problem in words for a paid stranger; the server's own words follow, for whoever helps them. */
/** Refusals whose message is written for the participant (what to do), shown as it is. */
const SAID_TO_PARTICIPANTS = new Set(['SESSION_ELSEWHERE', 'TOO_MANY_NEW_WORKERS', 'LIMITED_SESSION', 'BUSY', 'GAME_PAUSED']);

export function problemText(error: unknown): string {
  if (error instanceof StudyApiError && error.code === 'NETWORK') return "Cannot reach the study's server. Check your internet connection, then try again.";
  if (error instanceof StudyApiError && SAID_TO_PARTICIPANTS.has(error.code)) return `${error.message[0].toUpperCase()}${error.message.slice(1)}.`;
  const detail = error instanceof Error ? error.message : String(error);
  return `Something went wrong (${detail}). Try again, or reload the page.`;
}

/** Runs `work` with `buttons` disabled; what goes wrong is said on the frame. */
export async function busy(frame: StudyFrame, buttons: readonly HTMLButtonElement[], work: () => Promise<void>): Promise<void> {
  frame.say(null);
  for (const button of buttons) button.disabled = true;
  try {
    await work();
  } catch (error) {
    if (!(error instanceof PageLeft)) frame.say(problemText(error));
  } finally {
    for (const button of buttons) button.disabled = false;
  }
}

/** How the pages name the worker's platform. */
export function platformName(kind: PublicStudy['platform']['kind']): string {
  return kind === 'prolific' ? 'Prolific' : kind === 'mturk' ? 'MTurk' : 'the lab';
}
