/**
 * The open game on screen: moves the cursor (Playback) and shows the state there in the world,
 * the status bar, the side panel and the control bar, in the chosen view.
 */
import { WorldRenderer } from '../world/WorldRenderer';
import { WorldScene } from '../world/WorldScene';
import { ControlBar, type ControlActions } from './controls';
import { hook } from './hook';
import { timelineMarks } from './marks';
import { SidePanel } from './panel';
import { Playback } from './playback';
import { duration, timeAt, type ReplayedGame } from './recording';
import { StatusBar } from './status';
import { showFrame, VIEW_ROLES, type ViewName } from './views';

interface OpenGame {
  readonly recording: ReplayedGame;
  readonly world: WorldScene;
  readonly playback: Playback;
}

export class Viewer implements ControlActions {
  readonly controls = new ControlBar(this);
  private game: OpenGame | null = null;
  private view: ViewName = 'leader';
  private speed = 1;

  constructor(
    private readonly renderer: WorldRenderer,
    private readonly status: StatusBar,
    private readonly panel: SidePanel,
  ) {
    this.controls.showView(this.view);
  }

  get hasGame(): boolean {
    return this.game !== null;
  }

  /** The game on screen, if any. */
  get recording(): ReplayedGame | null {
    return this.game?.recording ?? null;
  }

  /**
   * The game on screen, grown (a game being played, its log fetched again): the world and the
   * chosen view stay, and the newest state is shown if the person was at the newest before.
   */
  extend(recording: ReplayedGame): void {
    const game = this.game;
    if (!game || game.recording.header.gameId !== recording.header.gameId) return this.open(recording, recording.events.length);
    const previous = game.playback.cursor;
    const cursor = previous === game.recording.events.length ? recording.events.length : previous;
    game.playback.dispose();
    const playback = new Playback(recording.events.length, (next, before) => this.show(next, before));
    playback.setSpeed(this.speed);
    this.game = { recording, world: game.world, playback };
    this.panel.showGame(recording);
    this.showMarks(recording);
    hook.events = recording.events.length;
    playback.seek(cursor);
    this.show(playback.cursor, previous);
  }

  /** Shows `recording` from event `cursor` on, in place of the game open before. */
  open(recording: ReplayedGame, cursor = 0): void {
    if (this.game) {
      this.game.playback.dispose();
      this.game.world.dispose();
    }
    const world = new WorldScene(recording.header.map);
    const playback = new Playback(recording.events.length, (next, previous) => this.show(next, previous));
    playback.setSpeed(this.speed);
    this.game = { recording, world, playback };
    this.renderer.setWorld(world, recording.header.config.view);
    this.status.showGame(recording.header.gameId);
    this.panel.showGame(recording);
    this.showMarks(recording);
    this.controls.setEnabled(true);
    hook.ready = false;
    hook.events = recording.events.length;
    playback.seek(cursor);
    this.show(playback.cursor, playback.cursor);
    void this.whenDrawn().then(() => {
      if (this.game?.world === world) hook.ready = true;
    });
  }

  seek(cursor: number): void {
    this.game?.playback.seek(cursor);
  }

  step(delta: 1 | -1): void {
    this.game?.playback.step(delta);
  }

  toggle(): void {
    this.game?.playback.toggle();
  }

  setSpeed(speed: number): void {
    this.speed = speed;
    this.game?.playback.setSpeed(speed);
  }

  setView(view: ViewName): void {
    this.view = view;
    this.controls.showView(view);
    if (this.game) this.show(this.game.playback.cursor, this.game.playback.cursor);
  }

  /** The state at `cursor`; a single step forward animates a set, anything else is shown at once. */
  private show(cursor: number, previous: number): void {
    const { recording, world, playback } = this.game!;
    const state = recording.states[cursor];
    const stepForward = cursor === previous + 1;
    if (!stepForward) world.finishAnimations();
    showFrame(world, this.renderer, this.view, {
      view: recording.views[VIEW_ROLES[this.view]][cursor],
      setMade: stepForward && recording.events[cursor - 1].outcome.set !== undefined,
    });
    // At the last event of a game that ended early (abandoned, interrupted), its end line says how.
    this.status.update(state, cursor === recording.events.length ? recording.end : null);
    this.panel.update(recording, cursor);
    this.controls.update({ cursor, length: playback.length, playing: playback.playing, time: timeAt(recording, cursor), duration: duration(recording) });
    hook.cursor = cursor;
    hook.score = state.score;
  }

  private showMarks(recording: ReplayedGame): void {
    this.controls.showMarks(timelineMarks(recording), recording.events.length, (cursor) => this.seek(cursor));
  }

  /** Resolves after the renderer has drawn a frame. */
  private whenDrawn(): Promise<void> {
    const drawn = this.renderer.rendered;
    return new Promise((resolve) => {
      const check = () => (this.renderer.rendered > drawn ? resolve() : requestAnimationFrame(check));
      requestAnimationFrame(check);
    });
  }
}
