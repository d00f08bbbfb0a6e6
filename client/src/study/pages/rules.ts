/**
 * The rules in plain words, with a picture of each player's screen, then the researcher's own
 * rules (Markdown) when the study has them. The quiz offers the same text again.
 */
import type { PublicStudy } from '../../../../shared/study/studyFile';
import { h } from '../../ui/dom';
import { payText } from '../format';
import { markdownElement } from '../markdown';
import { followerHears, leaderInterjections, partnerSentence } from '../rulesWords';
import leaderView from '../../../study/images/leader.webp';
import followerView from '../../../study/images/follower.webp';
import { busy, studyFrame, type StudyFrame } from './frame';

export function rulesPage(study: PublicStudy, read: () => Promise<void>): StudyFrame {
  const done = h('button', { type: 'button', class: 'rules-read' }, 'I have read the rules');
  const frame = studyFrame(
    study,
    'rules',
    'How to play',
    rulesContent(study, 2),
    h('p', {}, 'Next comes a short practice game with a computer partner, then a quiz about these rules.'),
    h('div', { class: 'study-actions' }, done),
  );
  done.addEventListener('click', () => void busy(frame, [done], read));
  return frame;
}

/** The rules themselves; `level` is the HTML level of their section headings. */
export function rulesContent(study: PublicStudy, level: 2 | 3): HTMLElement {
  const heading = (text: string) => h(level === 2 ? 'h2' : 'h3', {}, text);
  const leaderMay = leaderInterjections(study.game);
  const followerMay = followerHears(study.game);
  return h(
    'div',
    { class: 'rules' },
    h(
      'p',
      {},
      `${partnerSentence(study.game)} One of you is the `,
      h('strong', {}, 'leader'),
      ', the other is the ',
      h('strong', {}, 'follower'),
      '. You are a team: you share the score.',
    ),
    heading('The goal: sets of cards'),
    h(
      'p',
      {},
      'Cards lie on the ground. A ',
      h('strong', {}, 'set'),
      ' is three cards whose colours, shapes and numbers of shapes are all different: for example 1 red star, 2 blue hearts and 3 green triangles. ',
      'Step on a card to pick it; step on it again to put it back. Each set is one point, and gives you both more turns.',
    ),
    heading('The leader'),
    h(
      'p',
      {},
      'The leader sees the whole map. In each turn the leader may move a few steps and writes instructions for the follower, such as "Turn left and walk to the 2 blue hearts by the pond", then presses ',
      h('strong', {}, 'End turn'),
      '.',
    ),
    leaderMay === null ? null : h('p', {}, leaderMay),
    viewFigure(leaderView, "The leader's screen", "The leader's screen: the whole map from above, with its cards, and the follower's view in a corner. Instructions are written on the right."),
    heading('The follower'),
    h(
      'p',
      {},
      "The follower sees only what is in front of it, and the leader's instruction. In each turn the follower moves with the arrow keys to do what the instruction says, then presses ",
      h('strong', {}, 'Done'),
      ' (or the D key) to get the next one.',
    ),
    followerMay === null ? null : h('p', {}, followerMay),
    viewFigure(followerView, "The follower's screen", "The follower's screen: only what is in front of the follower, and the leader's instruction on the right."),
    heading('Turns and time'),
    h('p', {}, 'The leader and the follower take turns. Each turn has a time limit, shown at the top of the screen. The game ends when the turns run out.'),
    heading('Your pay'),
    h('p', {}, `You get ${payText(study.pay)}`),
    study.rules ? heading('From the researchers') : null,
    study.rules ? markdownElement(study.rules, level === 2 ? 3 : 4) : null,
  );
}

function viewFigure(source: string, alt: string, caption: string): HTMLElement {
  return h('figure', { class: 'view-picture' }, h('img', { src: source, alt, width: 640, height: 400, loading: 'lazy' }), h('figcaption', {}, caption));
}
