/**
 * A game in progress, for either role: the status bar, the world, the role's side panel, the
 * banners, and the keyboard. Keys and buttons act only on your turn; whatever the server refuses
 * is shown in words. The leader sees the whole world from above with an inset of the follower's
 * view; the follower sees, in first person, exactly its view as the server sent it: the cells it
 * has seen, the cards in view and those it remembers.
 */
import type { GameConfig } from '../../../shared/engine/config';
import type { KnownMap } from '../../../shared/engine/playerView';
import type { Role } from '../../../shared/engine/state';
import type { Move } from '../../../shared/engine/actions';
import type { Notice } from '../../../shared/protocol/messages';
import { Banners } from '../ui/banners';
import { h } from '../ui/dom';
import { Sounds } from '../ui/sound';
import { WorldRenderer } from '../world/WorldRenderer';
import { showView } from '../world/showView';
import { WorldScene } from '../world/WorldScene';
import { CardInfo } from './cardInfo';
import { cuesBetween } from './cues';
import { FeedbackCue } from './feedbackCue';
import { DONE_KEY, FollowerPanel } from './FollowerPanel';
import { insetControls } from './insetControls';
import { pendingInstructions } from './interjections';
import { interjectionKey, type Interjection } from './keyHelp';
import { LeaderPanel } from './LeaderPanel';
import {
  cancelledText,
  connectionClosed,
  endReasonText,
  NO_STEPS_TEXT,
  partnerDisconnectedText,
  SERVER_SILENT_SECONDS,
  SERVER_SILENT_TEXT,
  serverStalledText,
  partnerLeftBanner,
  partnerLeftReason,
  timeoutText,
  TURN_SKIPPED_TEXT,
  waitText,
  type Explained,
} from './messages';
import type { Closed, GameConnection, GameView } from './session';
import { StatusBar } from './StatusBar';

const KEY_MOVES: Readonly<Record<string, Move>> = { ArrowUp: 'MF', ArrowDown: 'MB', ArrowLeft: 'RL', ArrowRight: 'RR' };
/** The bar at the top of the world (buttons, the selected cards and the notices), in CSS pixels: the leader's board is drawn below it. */
const WORLD_BAR_HEIGHT = 52;

export class GameScreen {
  readonly element: HTMLElement;
  private readonly status: StatusBar;
  private readonly banners = new Banners();
  private readonly renderer: WorldRenderer;
  private readonly world: WorldScene;
  private readonly panel: LeaderPanel | FollowerPanel;
  private readonly cardInfo: CardInfo;
  private readonly sounds = new Sounds();
  /** The leader's live feedback, over the follower's world. */
  private readonly feedbackCue = new FeedbackCue();
  /** The view shown before this one, to tell what changed. */
  private lastView: GameView | null = null;
  /** Checks each second whether the server has stopped answering (checkServerSilence). */
  private readonly silenceTimer: number;
  private lastWaitHint = 0;
  private readonly partner: Role;
  /** The partner's connection dropped and it has not come back (yet). */
  private partnerAway = false;
  /** Why the partner left, once it has: the game-over dialog says it again. */
  private partnerLeft: Explained | null = null;
  private readonly onKey = (event: KeyboardEvent) => this.key(event);

  constructor(
    private readonly session: GameConnection,
    private readonly role: Role,
    map: KnownMap,
    config: GameConfig,
    private readonly exit: () => void,
    /** What the button that calls `exit` says (a study's page goes on to its next step, not to the lobby). */
    private readonly exitLabel = 'Back to the lobby',
  ) {
    this.partner = role === 'leader' ? 'follower' : 'leader';
    this.status = new StatusBar(role);
    this.panel = role === 'leader' ? new LeaderPanel(session) : new FollowerPanel(session);
    const worldBox = h('div', { class: 'world', 'data-view': role === 'leader' ? 'overhead' : 'firstPerson' });
    this.renderer = new WorldRenderer(worldBox);
    this.world = new WorldScene(map);
    this.renderer.setWorld(this.world, config.view);
    // The selected cards in words and the notices sit in the bar, between the leader's buttons, off
    // the board; a notice shows over the selected cards until it fades.
    const notes = h('div', { class: 'world-notes' }, this.banners.element);
    const bar = h('div', { class: 'world-bar' }, notes);
    bar.style.height = `${WORLD_BAR_HEIGHT}px`;
    worldBox.append(bar);
    if (role === 'leader') {
      const toggle = h('button', { type: 'button', class: 'overlay-button camera-toggle' }, 'Top-down view');
      toggle.addEventListener('click', () => {
        const next = this.renderer.cameraMode === 'overhead' ? 'topdown' : 'overhead';
        this.renderer.setMode(next);
        worldBox.dataset.view = next;
        toggle.textContent = next === 'overhead' ? 'Top-down view' : 'Angled view';
      });
      bar.prepend(toggle);
      bar.append(insetControls(this.renderer));
      this.renderer.setOverviewBand(WORLD_BAR_HEIGHT);
      // For tests: where the board, its cards and the inset are drawn.
      (window as unknown as { __overview: unknown }).__overview = () => this.renderer.overviewLayout();
    } else {
      this.renderer.setMode('firstPerson');
      worldBox.append(this.feedbackCue.element);
    }
    this.cardInfo = new CardInfo(worldBox, this.renderer, notes);
    this.status.element.append(this.sounds.toggle);
    this.element = h('div', { class: `game-screen ${role}` }, this.status.element, h('div', { class: 'game', role: 'main' }, worldBox, this.panel.element));
    session.on('state', (view) => this.update(view));
    session.on('notice', (notice) => this.notice(notice));
    session.on('refused', (refusal) => this.banners.show(`Refused: ${refusal.message}`, 'error'));
    session.on('connection', (status, closed) => this.connection(status, closed));
    window.addEventListener('keydown', this.onKey);
    this.silenceTimer = window.setInterval(() => this.checkServerSilence(), 1000);
    if (session.view) this.update(session.view);
  }

  dispose(): void {
    window.removeEventListener('keydown', this.onKey);
    clearInterval(this.silenceTimer);
    this.status.dispose();
    this.renderer.dispose();
    this.world.dispose();
    this.sounds.dispose();
    this.feedbackCue.dispose();
    if (this.panel instanceof LeaderPanel) this.panel.interjections.dispose();
  }

  /**
   * A turn's deadline long past with no new view: the server has stopped answering (a stall). The
   * page says the game is paused until the next view, then the server says what happened (P-154).
   */
  private checkServerSilence(): void {
    const view = this.lastView;
    if (view?.phase === 'playing' && view.turnDeadline > 0 && Date.now() > view.turnDeadline + SERVER_SILENT_SECONDS * 1000) {
      this.banners.hold('server', SERVER_SILENT_TEXT, 'warning');
    }
  }

  private update(view: GameView): void {
    this.banners.clear('server');
    const setMade = this.lastView !== null && view.score > this.lastView.score;
    for (const cue of cuesBetween(this.lastView, view, this.role)) {
      this.banners.show(cue.text, cue.tone, 4, cue.kind);
      this.sounds.play(cue.kind);
    }
    this.lastView = view;
    this.status.update(view);
    this.panel.update(view);
    this.cardInfo.update(view);
    showView(this.world, this.renderer, view, setMade);
    (window as unknown as { __game: unknown }).__game = { role: this.role, view };
  }

  private canAct(): boolean {
    const view = this.session.view;
    return view?.phase === 'playing' && view.turn.role === this.role && this.session.connected;
  }

  private key(event: KeyboardEvent): void {
    if (event.isComposing) return;
    if (this.role === 'leader' && this.leaderKey(event, this.panel as LeaderPanel)) return;
    const target = event.target as HTMLTextAreaElement | HTMLInputElement | null;
    const move = KEY_MOVES[event.key];
    // A text field keeps the keys that edit its text; an empty one has none to edit, so the arrows move the avatar.
    if (target && (target.tagName === 'TEXTAREA' || target.tagName === 'INPUT') && (target.value !== '' || !move)) return;
    const done = this.role === 'follower' && event.key.toLowerCase() === DONE_KEY;
    if (!move && !done) return;
    event.preventDefault();
    if (!this.canAct()) return this.waitHint();
    if (!move) return (this.panel as FollowerPanel).markDone();
    // The view's legal moves say what is in the way; a blocked move is not sent.
    if (this.session.view!.legal.moves.includes(move)) this.session.send({ type: 'move', move });
    else if (this.session.view!.turn.stepsLeft === 0) this.banners.show(NO_STEPS_TEXT, 'info', 3);
    else this.banners.show('Something is in the way.', 'info', 2);
  }

  /**
   * The leader's own keys: Ctrl+Enter (or Cmd+Enter) ends the turn; the chords of feedback and
   * cancelling, when the game's rules have them; a key meant as text goes into the box. True if handled.
   */
  private leaderKey(event: KeyboardEvent, panel: LeaderPanel): boolean {
    const interjection = interjectionKey(event);
    if (interjection && this.inRules(interjection)) {
      event.preventDefault();
      const why = panel.interjections.interject(interjection);
      if (why) this.banners.show(why, 'info', 3);
      return true;
    }
    if (event.key !== 'Enter' || !(event.ctrlKey || event.metaKey)) return panel.takeTyping(event);
    event.preventDefault();
    if (!this.canAct()) {
      this.waitHint();
      return true;
    }
    const why = panel.sendAndEndTurn();
    if (why) this.banners.show(why, 'info', 4);
    return true;
  }

  /** The game's rules allow this interjection at all (the view's legal actions say whether now). */
  private inRules(interjection: Interjection): boolean {
    const config = this.session.view?.config;
    return (interjection === 'cancel' ? config?.cancelInstructions : config?.liveFeedback) ?? false;
  }

  private waitHint(): void {
    const view = this.session.view;
    if (!view || view.phase !== 'playing' || Date.now() - this.lastWaitHint < 2000) return;
    this.lastWaitHint = Date.now();
    this.banners.show(waitText(view.turn.role, this.session.connected), 'info', 2);
  }

  private notice(notice: Notice): void {
    switch (notice.kind) {
      case 'turnSkipped':
        return this.banners.show(TURN_SKIPPED_TEXT, 'warning');
      case 'timeout': {
        // The notice comes before the view that follows the timeout: the leader's view still holds its queue.
        const queued = this.session.view?.instructions.some((instruction) => instruction.status !== 'done') ?? false;
        return this.banners.show(timeoutText(notice.role, this.role, queued), 'warning');
      }
      case 'serverStalled':
        this.banners.clear('server');
        return this.banners.show(serverStalledText(notice.seconds), 'warning', 12);
      case 'partnerDisconnected':
        // The turn clock runs on: a turn of the disconnected player ends by its timeout as usual.
        this.partnerAway = true;
        return this.banners.hold('partner', partnerDisconnectedText(this.partner, notice.seconds), 'warning');
      case 'partnerReconnected':
        this.partnerAway = false;
        this.banners.clear('partner');
        return this.banners.show(`The ${this.partner} is back.`, 'success');
      case 'partnerLeft':
        this.banners.clear('partner');
        this.partnerLeft = partnerLeftReason(this.partner, notice, this.partnerAway);
        return this.banners.show(partnerLeftBanner(this.partner, notice, this.partnerAway), 'error', 10);
      case 'feedback':
        if (this.panel instanceof LeaderPanel) return this.panel.interjections.sent(notice.signal, notice.afterStep);
        this.feedbackCue.show(notice.signal);
        return this.sounds.play(notice.signal);
      case 'cancelled': {
        // The notice comes before the view that shows the instructions cancelled.
        const pending = this.session.view ? pendingInstructions(this.session.view) : 0;
        return this.banners.show(cancelledText(this.role, pending), this.role === 'follower' ? 'warning' : 'info', 8);
      }
      case 'followerGaveUp':
        return this.banners.show(`Scripted follower: ${notice.message}`, 'warning', 12);
      case 'agentStopped':
        return this.banners.show(notice.message, 'warning', 20);
      case 'gameOver':
        return this.gameOver(notice.score, notice.reason);
    }
  }

  private connection(status: 'dropped' | 'reconnected' | 'closed', closed?: Closed): void {
    if (status === 'dropped') return this.banners.hold('connection', 'Connection lost. Reconnecting…', 'error');
    this.banners.clear('connection');
    if (status === 'reconnected') return this.banners.show('Reconnected: the game goes on.', 'success');
    if (this.session.view?.phase !== 'ended') {
      const said = connectionClosed(closed?.code ?? 0, closed?.reason ?? '');
      this.banners.hold('connection', said, 'error', { label: this.exitLabel, run: this.exit });
    }
  }

  private gameOver(score: number, reason: string): void {
    // The game-over dialog says what matters now; the turn's cues are stale.
    this.banners.clearKinds();
    const back = h('button', { type: 'button' }, this.exitLabel);
    back.addEventListener('click', this.exit);
    this.element.append(
      h(
        'div',
        { class: 'game-over', role: 'dialog', 'aria-label': 'Game over' },
        h('div', { class: 'card' }, h('h2', {}, 'Game over'), h('div', { class: 'score', 'data-final-score': score }, score), h('p', {}, `point${score === 1 ? '' : 's'}. ${endReasonText(reason, this.partner, this.partnerLeft)}`), back),
      ),
    );
  }
}
