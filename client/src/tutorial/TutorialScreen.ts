/**
 * The interactive tutorial for one role: the game screen over a TutorialGame, with the step to do
 * now at the top of the side panel and a list of the steps; it is finished only when every step is done.
 */
import type { Role } from '../../../shared/engine/state';
import { GameScreen } from '../game/GameScreen';
import type { GameView } from '../game/session';
import { h, setChildren } from '../ui/dom';
import { currentStep, NO_PROGRESS, progressAfter, TUTORIAL_STEPS, type Progress } from './steps';
import { TutorialGame } from './TutorialGame';

export class TutorialScreen {
  readonly element = h('div', { class: 'tutorial' });
  private readonly hint = h('section', { class: 'tutorial-hint', 'aria-live': 'polite', 'aria-label': 'Tutorial' });
  private readonly game: TutorialGame;
  private screen: GameScreen | null = null;
  private progress: Progress = NO_PROGRESS;
  private lastView: GameView | null = null;

  constructor(
    private readonly role: Role,
    private readonly finished: () => void,
    leave: () => void,
  ) {
    this.game = new TutorialGame(role);
    this.game.on('start', (map, config) => {
      this.screen = new GameScreen(this.game, role, map, config, leave);
      this.screen.element.querySelector('.side')!.prepend(this.hint);
      this.element.replaceChildren(this.screen.element);
    });
    this.game.on('state', (view) => this.update(view));
  }

  start(): Promise<void> {
    return this.game.start();
  }

  dispose(): void {
    this.game.stop();
    this.screen?.dispose();
  }

  private update(view: GameView): void {
    this.progress = progressAfter(this.progress, this.lastView, view, this.role);
    this.lastView = view;
    const steps = TUTORIAL_STEPS[this.role];
    const now = currentStep(this.role, this.progress);
    this.element.dataset.step = String(now);
    setChildren(
      this.hint,
      h('h2', {}, now === steps.length ? 'Tutorial: all done' : `Tutorial: step ${now + 1} of ${steps.length}`),
      h('ol', {}, ...steps.map((step, i) => h('li', { class: this.progress[step.done] ? 'done' : i === now ? 'current' : '', 'aria-current': i === now ? 'step' : undefined }, step.text))),
    );
    if (now === steps.length) this.complete();
  }

  private complete(): void {
    if (this.element.querySelector('.tutorial-complete')) return;
    this.game.stop();
    const next = h('button', { type: 'button', class: 'continue' }, 'Continue');
    next.addEventListener('click', this.finished);
    this.element.append(
      h(
        'div',
        { class: 'game-over tutorial-complete', role: 'dialog', 'aria-label': 'Tutorial complete' },
        h('div', { class: 'card' }, h('h2', {}, 'Tutorial complete'), h('p', {}, `You know how to play as the ${this.role}.`), next),
      ),
    );
    next.focus();
  }
}
