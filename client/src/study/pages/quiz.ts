/**
 * The quiz on the rules: one group of choices per question, all to be answered, sent to the server,
 * which marks them. After a failed attempt the page marks the questions the server says were
 * wrong (never which answer is right) and how many attempts are left; the answers stay chosen.
 * The rules can be read again on the page.
 */
import type { PublicStudy } from '../../../../shared/study/studyFile';
import type { PublicWorker } from '../../../../shared/study/worker';
import { h, setChildren } from '../../ui/dom';
import type { QuizResult } from '../api';
import { busy, studyFrame, type StudyFrame } from './frame';
import { rulesContent } from './rules';

/** `submit` answers with the marking, or null when the page has been left (the quiz passed, or the last attempt failed). */
export function quizPage(study: PublicStudy, worker: PublicWorker, submit: (answers: number[]) => Promise<QuizResult | null>): StudyFrame {
  const { questions, passMark } = study.quiz;
  const status = h('p', { class: 'quiz-status', 'aria-live': 'polite' }, attemptsText(worker.quiz.attemptsLeft));
  const groups = questions.map((question, i) => {
    const note = h('p', { class: 'quiz-wrong', id: `quiz-wrong-${i}` });
    const choices = question.choices.map((choice, c) =>
      h('label', { class: 'quiz-choice' }, h('input', { type: 'radio', name: `question-${i}`, value: c, required: true }), choice),
    );
    const fieldset = h('fieldset', { class: 'quiz-question', 'data-question': i }, h('legend', {}, `${i + 1}. ${question.prompt}`), note, ...choices);
    return { fieldset, note };
  });
  const send = h('button', { type: 'submit', class: 'quiz-submit' }, 'Check my answers');
  const form = h('form', { class: 'quiz', novalidate: true }, ...groups.map((group) => group.fieldset), h('div', { class: 'study-actions' }, send));
  const frame = studyFrame(
    study,
    'quiz',
    'Quiz on the rules',
    h('p', {}, `Answer these ${questions.length} question${questions.length === 1 ? '' : 's'} about the game. You need ${passMark} right answer${passMark === 1 ? '' : 's'} to go on and play.`),
    status,
    h('details', { class: 'rules-again' }, h('summary', {}, 'Read the rules again'), rulesContent(study, 3)),
    form,
  );

  const answers = () => questions.map((_, i) => form.querySelector<HTMLInputElement>(`input[name="question-${i}"]:checked`));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const chosen = answers();
    const unanswered = chosen.findIndex((input) => input === null);
    if (unanswered >= 0) {
      frame.say(`Please answer every question: question ${unanswered + 1} has no answer yet.`);
      groups[unanswered].fieldset.querySelector('input')?.focus();
      return;
    }
    void busy(frame, [send], async () => {
      const result = await submit(chosen.map((input) => Number(input!.value)));
      if (result) showMarks(result);
    });
  });

  function showMarks(result: QuizResult): void {
    groups.forEach(({ fieldset, note }, i) => {
      const wrong = result.wrong?.includes(i) ?? false;
      fieldset.classList.toggle('wrong', wrong);
      note.textContent = wrong ? 'Wrong answer: choose another one.' : '';
      if (wrong) fieldset.setAttribute('aria-describedby', note.id);
      else fieldset.removeAttribute('aria-describedby');
    });
    setChildren(
      status,
      h('strong', {}, `You got ${result.score} of ${questions.length} right; you need ${result.passMark}.`),
      ` ${result.wrong === null ? 'Read the rules again and check your answers.' : 'The questions marked "Wrong answer" need another answer.'} ${attemptsText(result.attemptsLeft)}`,
    );
    status.classList.add('failed');
    status.scrollIntoView({ block: 'center' });
  }

  return frame;
}

function attemptsText(left: number): string {
  return left === 1 ? 'This is your last attempt.' : `You have ${left} attempts.`;
}
