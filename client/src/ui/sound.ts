/**
 * Short tones for the game's cues, made with the Web Audio API (nothing is downloaded). Off until
 * the player turns them on with the toggle, and the choice is remembered in this browser: a
 * crowdworker may be somewhere sound is not welcome, and browsers allow audio only after a click.
 */
import { h } from './dom';

export type SoundKind = 'set' | 'yourTurn' | 'lastRound' | 'positive' | 'negative';

/** Each cue's notes (Hz), played one after another. */
const NOTES: Readonly<Record<SoundKind, readonly number[]>> = {
  set: [660, 880, 1320],
  yourTurn: [523, 784],
  lastRound: [440, 440, 330],
  // The leader's live feedback, to the follower: rising for good, falling for not that.
  positive: [587, 880],
  negative: [392, 262],
};
const NOTE_SECONDS = 0.11;
const VOLUME = 0.12;
const STORAGE_KEY = 'cerealbar.sound';

function remembered(): boolean {
  try {
    return localStorage.getItem(STORAGE_KEY) === 'on';
  } catch {
    return false;
  }
}

export class Sounds {
  readonly toggle = h('button', { type: 'button', class: 'sound-toggle' });
  private enabled = remembered();
  private context: AudioContext | null = null;

  constructor() {
    this.toggle.addEventListener('click', () => this.set(!this.enabled));
    this.show();
  }

  play(kind: SoundKind): void {
    if (!this.enabled) return;
    this.context ??= new AudioContext();
    const start = this.context.currentTime + 0.01;
    NOTES[kind].forEach((frequency, i) => {
      const context = this.context!;
      const oscillator = context.createOscillator();
      const gain = context.createGain();
      const at = start + i * NOTE_SECONDS;
      oscillator.frequency.value = frequency;
      // A soft attack and release: no clicks.
      gain.gain.setValueAtTime(0, at);
      gain.gain.linearRampToValueAtTime(VOLUME, at + 0.01);
      gain.gain.linearRampToValueAtTime(0, at + NOTE_SECONDS - 0.01);
      oscillator.connect(gain).connect(context.destination);
      oscillator.start(at);
      oscillator.stop(at + NOTE_SECONDS);
    });
  }

  dispose(): void {
    void this.context?.close();
  }

  private set(enabled: boolean): void {
    this.enabled = enabled;
    try {
      localStorage.setItem(STORAGE_KEY, enabled ? 'on' : 'off');
    } catch {
      // Not remembered: it still holds for this page.
    }
    this.show();
    if (enabled) this.play('yourTurn');
  }

  private show(): void {
    this.toggle.textContent = this.enabled ? 'Sound on' : 'Sound off';
    this.toggle.setAttribute('aria-pressed', String(this.enabled));
    this.toggle.title = this.enabled ? 'Turn the sound cues off' : 'Play a sound when a set is made, your turn comes, the last round begins, and the leader sends feedback';
  }
}
