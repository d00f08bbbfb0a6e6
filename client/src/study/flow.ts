/**
 * A worker's way through a study, page by page. The server says where the worker is (`step`, in
 * every answer); this only shows that step's page and sends what the worker does there. The
 * session comes from the browser's storage when its ids are the link's, else from the link (or a
 * lab's form); an expired one is started again from the same ids. A refusal that means the page is
 * behind (another tab went on) shows the step the server has instead.
 */
import type { SeatReservation } from '@colyseus/sdk';
import type { Role } from '../../../shared/engine/state';
import { BUSY_RETRY_AFTER_SECONDS } from '../../../shared/protocol/messages';
import type { PublicStudy } from '../../../shared/study/studyFile';
import type { PublicWorker } from '../../../shared/study/worker';
import type { GameSession } from '../game/session';
import { loadSeat } from '../game/savedSeat';
import { StudyApi, StudyApiError, type QuizResult } from './api';
import type { SessionBody, StudyEntry } from './entry';
import { StudyGame } from './gameStep';
import { forgetSession, loadSession, saveSession, sameIds, type KeptSession } from './keptSession';
import { badLinkPage, joinLaterPage, labIdPage, mturkPreviewPage, unavailablePage } from './pages/arrival';
import { consentPage } from './pages/consent';
import { blockedPage, completionPage, declinedPage } from './pages/endings';
import { PageLeft, problemText, showFrame, type StudyFrame } from './pages/frame';
import { playPage } from './pages/play';
import { quizPage } from './pages/quiz';
import { rulesPage } from './pages/rules';
import { tutorialDonePage, tutorialIntroPage } from './pages/tutorial';

/** Refusals that mean the page shows an old step: the server's step is shown instead. */
const BEHIND = new Set(['WRONG_STEP', 'ALREADY_ANSWERED', 'DECLINED', 'QUIZ_PASSED', 'NO_ATTEMPTS_LEFT', 'ROLE_MISMATCH']);

type Sessions = typeof import('../game/session');

/** The longest the page waits by itself for the study to take a new participant again; past it, it says when to come back. */
const MAX_JOIN_WAIT_SECONDS = 120;

export class StudyFlow {
  private readonly api: StudyApi;
  private kept: KeptSession | null;

  constructor(
    private readonly app: HTMLElement,
    private readonly study: PublicStudy,
    private readonly entry: StudyEntry,
  ) {
    this.api = new StudyApi(study.id);
    this.kept = loadSession(study.id);
  }

  start(): void {
    const { entry, study } = this;
    if (entry.kind === 'mturkPreview') return this.show(mturkPreviewPage(study));
    if (entry.kind === 'badLink') return this.show(badLinkPage(study, entry.problem));
    // A link with other ids (another worker, a new assignment or submission) is a new session,
    // which the last session's token vouches for (the server lets a known worker's new one in with it).
    let held: string | null = null;
    if (entry.kind === 'ids' && this.kept && !sameIds(this.kept.ids, entry.body)) {
      held = this.kept.token;
      this.forget();
    }
    if (this.kept) {
      this.api.token = this.kept.token;
      return this.refresh();
    }
    if (entry.kind === 'lab') return this.showLabForm();
    const ids = entry.body;
    void this.loading(async () => this.route(await this.begin(ids, held)));
  }

  /** Asks the server where the worker is, and shows it. */
  private refresh(): void {
    void this.loading(async () => this.route(await this.call(() => this.api.me())));
  }

  /** First requests of a page load: failing, they leave a page that says so, with Try again. */
  private async loading(work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (error) {
      if (!(error instanceof PageLeft)) this.show(unavailablePage(problemText(error), () => this.start()));
    }
  }

  private async begin(ids: SessionBody, held: string | null = null): Promise<PublicWorker> {
    const { token, worker } = await this.startSession(ids, held);
    // A session started again (the token expired) keeps the wait's start.
    const again = this.kept !== null && sameIds(this.kept.ids, ids);
    this.keep({ ...(again ? this.kept : {}), participantId: worker.participantId, token, ids });
    return worker;
  }

  /** A new session; while the study takes no new participants for a moment (many arrive at once), the page waits and tries again. */
  private async startSession(ids: SessionBody, held: string | null): Promise<{ token: string; worker: PublicWorker }> {
    for (;;) {
      try {
        return await this.api.startSession(ids, held);
      } catch (error) {
        const wait = error instanceof StudyApiError && error.code === 'TOO_MANY_NEW_WORKERS' ? (error.retryAfterSeconds ?? Infinity) : Infinity;
        if (wait > MAX_JOIN_WAIT_SECONDS) throw error;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, wait * 1000);
          this.show(
            joinLaterPage(this.study, wait, () => {
              clearTimeout(timer);
              resolve();
            }),
          );
        });
      }
    }
  }

  /** A request with the session: an expired session is started again from its ids (once); a blocked worker sees its ending. */
  private async call<T>(request: () => Promise<T>, renewed = false): Promise<T> {
    try {
      return await request();
    } catch (error) {
      if (!(error instanceof StudyApiError)) throw error;
      if (error.code === 'SESSION_UNKNOWN' && this.kept && !renewed) {
        // The expired token still vouches for its worker (a lab's typed id alone would start a limited session).
        await this.begin(this.kept.ids, this.kept.token);
        return this.call(request, true);
      }
      if (error.code === 'BLOCKED') {
        this.show(blockedPage(this.study, this.labRestart()));
        throw new PageLeft();
      }
      throw error;
    }
  }

  /** A step's action: its answer's step is shown; a refusal that means the page is behind shows the server's step. */
  private async act<T>(request: () => Promise<T>): Promise<T> {
    try {
      return await this.call(request);
    } catch (error) {
      if (error instanceof StudyApiError && BEHIND.has(error.code)) {
        this.route(await this.call(() => this.api.me()));
        throw new PageLeft();
      }
      throw error;
    }
  }

  private route(worker: PublicWorker): void {
    const { study } = this;
    const advance = async (request: () => Promise<PublicWorker>) => this.route(await this.act(request));
    switch (worker.step) {
      case 'consent':
        return this.show(consentPage(study, (agree) => advance(() => this.api.consent(agree))));
      case 'rules':
        return this.show(rulesPage(study, () => advance(() => this.api.readRules())));
      case 'tutorial':
        return this.show(tutorialIntroPage(study, worker.tutorialsLeft[0], () => this.tutorial(worker.tutorialsLeft[0])));
      case 'quiz':
        return this.show(quizPage(study, worker, (answers) => this.submitQuiz(answers)));
      case 'play':
        return this.play(worker);
      case 'done':
      case 'screenedOut':
        return this.show(completionPage(study, worker, this.labRestart()));
      case 'declined':
        return this.show(declinedPage(study, this.labRestart()));
      case 'blocked':
        return this.show(blockedPage(study, this.labRestart()));
    }
  }

  private async tutorial(role: Role): Promise<void> {
    const { TutorialScreen } = await import('../tutorial/TutorialScreen');
    const screen: InstanceType<typeof TutorialScreen> = new TutorialScreen(
      role,
      () => {
        screen.dispose();
        void this.tutorialPassed(role);
      },
      () => {
        screen.dispose();
        this.refresh();
      },
    );
    this.app.replaceChildren(screen.element);
    document.title = `Practice · ${this.study.title}`;
    await screen.start();
  }

  /** Records the tutorial; if that fails, a page says so and tries again on request (the practice is not played again). */
  private async tutorialPassed(role: Role): Promise<void> {
    const save = async () => this.route(await this.act(() => this.api.passTutorial(role)));
    try {
      await save();
    } catch (error) {
      if (!(error instanceof PageLeft)) this.show(tutorialDonePage(this.study, role, save), problemText(error));
    }
  }

  private async submitQuiz(answers: number[]): Promise<QuizResult | null> {
    const result = await this.act(() => this.api.submitQuiz(answers));
    if (result.worker.step === 'quiz') return result;
    this.route(result.worker);
    return null;
  }

  /** The play step: back in a seat kept from before a refresh, or the page that asks for a game (saying `problem`, if any). */
  private play(worker: PublicWorker, problem: string | null = null): void {
    if (loadSeat() && problem === null) {
      void this.game((sessions) => sessions.GameSession.resume());
      return;
    }
    const findPartner = async () => {
      const reservation = await this.seat((words) => frame.say(words));
      this.keep({ ...this.kept!, waitStartedAt: Date.now() });
      await this.game((sessions) => sessions.GameSession.consume(reservation));
    };
    const frame = playPage(this.study, worker, findPartner);
    this.show(frame, problem);
  }

  /**
   * A seat in a game. While no process has room for a new game (the server is busy or restarting),
   * or the worker's last game may still go on (its server stalled), the page says so, waits as the
   * server asks and asks again: the worker keeps its place (P-153, P-156).
   */
  private async seat(say: (words: string) => void): Promise<SeatReservation> {
    for (;;) {
      try {
        return await this.act(() => this.api.play());
      } catch (error) {
        if (error instanceof StudyApiError && error.code === 'ALREADY_SEATED') {
          throw new Error('you already have a seat in a game, open in another tab or window: go back to it there, or close it and try again in a minute');
        }
        if (!(error instanceof StudyApiError && (error.code === 'BUSY' || error.code === 'GAME_PAUSED'))) throw error;
        say(problemText(error));
        await new Promise((resolve) => setTimeout(resolve, (error.retryAfterSeconds ?? BUSY_RETRY_AFTER_SECONDS) * 1000));
      }
    }
  }

  private async game(connect: (sessions: Sessions) => Promise<GameSession | null>): Promise<void> {
    const game = new StudyGame({
      app: this.app,
      study: this.study,
      waitStartedAt: this.kept?.waitStartedAt ?? Date.now(),
      claimNoPartner: () => this.call(() => this.api.noPartner()),
      readWorker: () => this.api.me(),
      over: (worker) => {
        this.keep({ ...this.kept!, waitStartedAt: undefined });
        if (worker) this.route(worker);
        else this.refresh();
      },
    });
    try {
      // A kept seat the server no longer holds: the game may have ended meanwhile.
      if (!(await game.run(connect))) this.refresh();
    } catch (error) {
      // The seat could not be taken (the game is open in another tab, no connection): said on the play page, which does not try the kept seat again.
      void this.loading(async () => {
        const worker = await this.call(() => this.api.me());
        if (worker.step === 'play') this.play(worker, problemText(error));
        else this.route(worker);
      });
    }
  }

  private showLabForm(): void {
    this.show(labIdPage(this.study, async (participantId) => this.route(await this.begin({ participantId }))));
  }

  /** In a lab, the endings let the experimenter start again: this browser forgets the session, and the form asks for an id. */
  private labRestart(): (() => void) | null {
    if (this.study.platform.kind !== 'lab') return null;
    return () => {
      this.forget();
      this.showLabForm();
    };
  }

  private keep(session: KeptSession): void {
    const { waitStartedAt, ...rest } = session;
    this.kept = waitStartedAt === undefined ? rest : session;
    saveSession(this.study.id, this.kept);
  }

  private forget(): void {
    this.kept = null;
    this.api.token = null;
    forgetSession(this.study.id);
  }

  private show(frame: StudyFrame, problem: string | null = null): void {
    showFrame(this.app, frame, this.study.title, problem);
  }
}
