/**
 * A worker's game in a study: the seat (the one the server reserved, or the one this browser kept
 * from before a refresh), the wait for a partner with the study's clock, then the game screen.
 * When the clock runs out the page claims the noPartner ending (the server checks the time, and
 * says when to ask again if it is early). In a study with arms nobody waits (the game starts as
 * the seat is taken, P-143): no clock runs and no ending is claimed. After the game, or when the
 * connection ends for good, the flow asks the server where the worker is now. While it waits,
 * the page also asks for the worker's step now and then: a worker who may no longer take its seat
 * (promoted to leader, or at an ending) leaves it and is shown its step, even when the room could
 * not say so.
 */
import type { PublicStudy } from '../../../shared/study/studyFile';
import { seatVerdict, type PublicWorker } from '../../../shared/study/worker';
import type { GameScreen } from '../game/GameScreen';
import type { GameSession } from '../game/session';
import { WaitingScreen } from '../lobby/WaitingScreen';
import { h, setChildren } from '../ui/dom';
import { StudyApiError } from './api';
import { formatClock } from './format';
import { problemText } from './pages/frame';
import { gameStartSentence } from './rulesWords';

type Sessions = typeof import('../game/session');

export interface StudyGameOptions {
  readonly app: HTMLElement;
  readonly study: PublicStudy;
  /** When the wait began, in this browser's clock (kept across a refresh). */
  readonly waitStartedAt: number;
  /** POST no-partner. */
  readonly claimNoPartner: () => Promise<PublicWorker>;
  /** GET me: where the worker is now. */
  readonly readWorker: () => Promise<PublicWorker>;
  /** The game or the wait is over: with the worker when the server already said where it is. */
  readonly over: (worker: PublicWorker | null) => void;
}

/** Seconds between claims of the noPartner ending that failed for a reason other than the time. */
const CLAIM_RETRY_SECONDS = 10;

/** Seconds between checks of the worker's step while it waits (the room tells a promotion at once; this is the fallback). */
const STEP_CHECK_SECONDS = 5;

export class StudyGame {
  private session: GameSession | null = null;
  private screen: GameScreen | null = null;
  private clockTimer: ReturnType<typeof setInterval> | null = null;
  private stepTimer: ReturnType<typeof setInterval> | null = null;
  private checkingStep = false;
  private claiming = false;
  private finished = false;
  private readonly clock = h('span', { class: 'wait-clock', role: 'timer' });
  private readonly note = h('p', { class: 'wait-note' });

  constructor(private readonly options: StudyGameOptions) {}

  /**
   * Takes the seat and waits for the partner. False when `connect` found no seat (a kept seat the
   * server no longer holds); a failure to connect is thrown.
   */
  async run(connect: (sessions: Sessions) => Promise<GameSession | null>): Promise<boolean> {
    const { app, study } = this.options;
    const waitsForPerson = study.game.partnerIsPerson;
    const notes = [h('p', {}, gameStartSentence(study.game)), this.note];
    if (waitsForPerson) {
      // The time left shows while the page joins, not only once it is seated.
      this.clock.textContent = formatClock(this.secondsLeft());
      notes.unshift(h('p', { class: 'wait-time' }, 'If nobody arrives within ', this.clock, ', the study ends here and you get your completion code.'));
    }
    const waiting = new WaitingScreen(null, ...notes);
    app.replaceChildren(waiting.element);
    document.title = `Waiting for a partner · ${study.title}`;
    const gameModule = import('../game/GameScreen');
    const session = await connect(await import('../game/session'));
    if (!session) return false;
    this.session = session;
    if (session.role) waiting.seated(session.role, undefined);
    session.on('seat', (role) => waiting.seated(role, undefined));
    session.on('queue', (position, count) => waiting.queue(position, count));
    session.on('connection', (status) => {
      if (status === 'closed' && !this.screen) void this.end(null);
    });
    session.on('start', async (map, config) => {
      this.stopWaiting();
      const { GameScreen } = await gameModule;
      if (this.finished) return;
      this.screen = new GameScreen(session, session.role!, map, config, () => void this.end(null), 'Continue');
      app.replaceChildren(this.screen.element);
      document.title = `Playing · ${study.title}`;
    });
    if (waitsForPerson) {
      this.tick();
      this.clockTimer = setInterval(() => this.tick(), 1000);
    }
    this.stepTimer = setInterval(() => void this.checkStep(), STEP_CHECK_SECONDS * 1000);
    return true;
  }

  /** Leaves the seat when the worker may no longer take it: its step is then shown. */
  private async checkStep(): Promise<void> {
    const role = this.session?.role;
    if (!role || this.checkingStep) return;
    this.checkingStep = true;
    try {
      const worker = await this.options.readWorker();
      if (this.stepTimer !== null && seatVerdict(worker.step, worker.role, role) !== 'plays') await this.end(worker);
    } catch (error) {
      // A blocked worker's page shows that; any other failure is asked again at the next check.
      if (this.stepTimer !== null && error instanceof StudyApiError && error.code === 'BLOCKED') await this.end(null);
    } finally {
      this.checkingStep = false;
    }
  }

  private secondsLeft(): number {
    return (this.options.waitStartedAt + this.options.study.time.waitForPartnerSeconds * 1000 - Date.now()) / 1000;
  }

  private tick(): void {
    const left = this.secondsLeft();
    this.clock.textContent = formatClock(left);
    if (left <= 0 && !this.claiming) void this.claim();
  }

  private async claim(): Promise<void> {
    this.claiming = true;
    let retryAfter = CLAIM_RETRY_SECONDS;
    try {
      const worker = await this.options.claimNoPartner();
      return await this.end(worker);
    } catch (error) {
      if (this.finished || this.screen) return;
      // Early by this browser's clock: the server says when. In a game (it is starting): the game's start stops the clock.
      if (error instanceof StudyApiError && error.code === 'TOO_EARLY') retryAfter = error.retryAfterSeconds ?? 1;
      else if (!(error instanceof StudyApiError && error.code === 'WRONG_STEP')) setChildren(this.note, problemText(error));
    }
    setTimeout(() => {
      this.claiming = false;
      if (!this.finished && !this.screen) void this.claim();
    }, retryAfter * 1000);
  }

  /** The wait is over (the game starts, or the page leaves): its clock and its checks stop. */
  private stopWaiting(): void {
    if (this.clockTimer !== null) clearInterval(this.clockTimer);
    if (this.stepTimer !== null) clearInterval(this.stepTimer);
    this.clockTimer = null;
    this.stepTimer = null;
  }

  private async end(worker: PublicWorker | null): Promise<void> {
    if (this.finished) return;
    this.finished = true;
    this.stopWaiting();
    this.screen?.dispose();
    this.screen = null;
    delete document.body.dataset.turn;
    delete document.body.dataset.phase;
    await this.session?.leave();
    this.options.over(worker);
  }
}
