/**
 * The control bar under the world (jump to the start or end, step, play and pause, the timeline
 * slider with the marks of feedback and cancels over it, where the cursor is in events and game
 * time, the playback speed) and the view switch that floats over the world.
 */
import { h, setChildren } from '../ui/dom';
import { crossIcon, thumbIcon } from '../ui/icons';
import type { TimelineMark } from './marks';
import { SPEEDS } from './playback';
import { formatGameTime } from './time';
import { VIEWS, type ViewName } from './views';

export interface ControlActions {
  seek(cursor: number): void;
  step(delta: 1 | -1): void;
  toggle(): void;
  setSpeed(speed: number): void;
  setView(view: ViewName): void;
}

export interface ControlState {
  readonly cursor: number;
  readonly length: number;
  readonly playing: boolean;
  readonly time: number;
  readonly duration: number;
}

export class ControlBar {
  readonly element: HTMLElement;
  readonly viewSwitch: HTMLElement;
  private readonly playButton: HTMLButtonElement;
  private readonly slider: HTMLInputElement;
  private readonly position = h('span', { class: 'replay-position' });
  private readonly clock = h('span', { class: 'replay-clock' });
  /** The marks over the slider, each where its event is on it. */
  private readonly marks = h('div', { class: 'replay-marks', role: 'group', 'aria-label': 'Feedback and cancels' });
  private readonly viewButtons: Map<ViewName, HTMLButtonElement>;
  private readonly buttons: HTMLButtonElement[];

  constructor(actions: ControlActions) {
    // Buttons keep the focus where it was when clicked, so Space and the arrows stay the viewer's.
    const button = (label: string, title: string, onClick: () => void, className = 'secondary') =>
      h('button', { type: 'button', class: className, title, 'aria-label': title, onmousedown: (event) => event.preventDefault(), onclick: onClick }, label);
    const start = button('Start', 'Start (Home)', () => actions.seek(0));
    const back = button('◀', 'Step back (←)', () => actions.step(-1));
    this.playButton = button('Play', 'Play or pause (Space)', () => actions.toggle(), 'replay-play');
    const forward = button('▶', 'Step forward (→)', () => actions.step(1));
    const end = button('End', 'End (End)', () => actions.seek(Number.POSITIVE_INFINITY));
    this.slider = h('input', { type: 'range', class: 'replay-slider', min: 0, max: 0, step: 1, value: 0, 'aria-label': 'Timeline' });
    this.slider.addEventListener('input', () => actions.seek(Number(this.slider.value)));
    const speed = h(
      'select',
      { class: 'replay-speed', 'aria-label': 'Playback speed', title: 'Playback speed' },
      ...SPEEDS.map((value) => h('option', { value, selected: value === 1 }, `${value}x`)),
    );
    speed.addEventListener('change', () => actions.setSpeed(Number(speed.value)));
    this.viewButtons = new Map(
      VIEWS.map((view) => [view.name, button(view.label, `${view.label} view (${view.key})`, () => actions.setView(view.name))]),
    );
    this.buttons = [start, back, this.playButton, forward, end, ...this.viewButtons.values()];
    this.element = h(
      'div',
      { class: 'replay-controls' },
      h('div', { class: 'replay-transport' }, start, back, this.playButton, forward, end),
      h('div', { class: 'replay-timeline' }, this.marks, this.slider),
      h('div', { class: 'replay-where' }, this.position, this.clock),
      speed,
    );
    this.viewSwitch = h('div', { class: 'replay-views', role: 'group', 'aria-label': 'View' }, ...this.viewButtons.values());
    this.setEnabled(false);
  }

  setEnabled(enabled: boolean): void {
    for (const control of [...this.buttons, this.slider]) control.disabled = !enabled;
  }

  update(state: ControlState): void {
    this.slider.max = String(state.length);
    this.slider.value = String(state.cursor);
    setChildren(this.playButton, state.playing ? 'Pause' : 'Play');
    this.playButton.setAttribute('aria-pressed', String(state.playing));
    setChildren(this.position, `Event ${state.cursor} of ${state.length}`);
    setChildren(this.clock, `${formatGameTime(state.time)} / ${formatGameTime(state.duration)}`);
  }

  /**
   * The marks of an open game whose slider runs from 0 to `length`. A mark is a picture with its
   * event's words (its tooltip, and its name for a screen reader); a click on it goes there, as the
   * slider and the arrow keys do.
   */
  showMarks(marks: readonly TimelineMark[], length: number, seek: (cursor: number) => void): void {
    setChildren(
      this.marks,
      ...marks.map((mark) => {
        const element = h(
          'span',
          { class: 'replay-mark', 'data-kind': mark.kind, 'data-at': mark.at, role: 'img', 'aria-label': mark.label, title: mark.label },
          mark.kind === 'cancel' ? crossIcon() : thumbIcon(mark.kind),
        );
        element.style.setProperty('--at', String(length === 0 ? 0 : mark.at / length));
        element.addEventListener('click', () => seek(mark.at));
        return element;
      }),
    );
    this.marks.hidden = marks.length === 0;
  }

  showView(view: ViewName): void {
    for (const [name, element] of this.viewButtons) {
      element.setAttribute('aria-pressed', String(name === view));
      element.classList.toggle('secondary', name !== view);
    }
  }
}
