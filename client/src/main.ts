/**
 * The game page: the lobby, waiting for a partner, then the game, then back to the lobby. The
 * connection (the Colyseus client) loads just after the lobby is on screen, and the game screen
 * (three.js and the world) while the player waits, so the lobby comes up fast.
 */
import './styles.css';
import type { GameScreen } from './game/GameScreen';
import type { GameSession } from './game/session';
import { BUSY_RETRY_AFTER_SECONDS, BUSY_STATUS } from '../../shared/protocol/messages';
import { connectionClosed } from './game/messages';
import { loadSeat } from './game/savedSeat';
import { readLink } from './lobby/joinRequest';
import { lobbyScreen } from './lobby/LobbyScreen';
import { WaitingScreen } from './lobby/WaitingScreen';

const app = document.getElementById('app')!;
/** The connection to the server (the Colyseus client) loads after the lobby is on screen. */
const sessionModule = () => import('./game/session');
const link = readLink(location.search);
let game: GameScreen | null = null;

function showLobby(joinProblem: string | null = null): void {
  game?.dispose();
  game = null;
  delete document.body.dataset.turn;
  delete document.body.dataset.phase;
  app.replaceChildren(lobbyScreen(link.parameters, link.problem, joinProblem, (options) => void play((sessions) => sessions.GameSession.join(options))));
}

/** Waits for a partner, then plays: in a new seat, or in the seat this browser held before a refresh. */
async function play(connect: (sessions: typeof import('./game/session')) => Promise<GameSession | null>, resuming = false): Promise<void> {
  let session: GameSession | null = null;
  let cancelled = false;
  const waiting = new WaitingScreen(() => {
    cancelled = true;
    void session?.leave();
    showLobby();
  });
  app.replaceChildren(waiting.element);
  const gameModule = import('./game/GameScreen');
  for (;;) {
    try {
      session = await connect(await sessionModule());
      break;
    } catch (error) {
      if (cancelled) return;
      // No process has room for a new game now: the page says so and asks again by itself.
      if ((error as { code?: number }).code !== BUSY_STATUS) return showLobby(joinFailure(error));
      await waiting.busy(BUSY_RETRY_AFTER_SECONDS);
      if (cancelled) return;
    }
  }
  if (!session) return showLobby(resuming ? 'Your last game is over, or its seat was not kept: join a new one.' : null);
  const joined = session;
  if (joined.role) waiting.seated(joined.role, joined.code);
  joined.on('seat', (role, code) => waiting.seated(role, code));
  joined.on('queue', (position, count) => waiting.queue(position, count));
  joined.on('connection', (status, closed) => {
    if (status === 'closed' && !game && closed) showLobby(connectionClosed(closed.code, closed.reason).text);
  });
  joined.on('start', async (map, config) => {
    const { GameScreen } = await gameModule;
    game = new GameScreen(joined, joined.role!, map, config, () => {
      void joined.leave();
      showLobby();
    });
    app.replaceChildren(game.element);
  });
}

function joinFailure(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  if (/fetch|network|ECONNREFUSED|Failed/i.test(message) && !/bad join option|seat/.test(message)) {
    return `Cannot reach the game server: ${message}`;
  }
  return `Could not join: ${message}`;
}

/** The tutorial for a role (`?tutorial=leader` or `follower`), played in the page; it ends back in the lobby. */
async function tutorial(role: 'leader' | 'follower'): Promise<void> {
  const { TutorialScreen } = await import('./tutorial/TutorialScreen');
  const toLobby = () => {
    const query = new URLSearchParams(location.search);
    query.delete('tutorial');
    location.assign(`${location.pathname}${query.size > 0 ? `?${query}` : ''}`);
  };
  const screen = new TutorialScreen(role, toLobby, toLobby);
  app.replaceChildren(screen.element);
  await screen.start();
}

const tutorialRole = new URLSearchParams(location.search).get('tutorial');
// A seat kept from before a refresh is taken back; otherwise the tutorial asked for, or the lobby.
if (loadSeat()) void play((sessions) => sessions.GameSession.resume(), true);
else if (tutorialRole === 'leader' || tutorialRole === 'follower') void tutorial(tutorialRole);
else showLobby();
// Fetched at once, so that joining does not wait for it.
void sessionModule();
