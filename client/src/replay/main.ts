/**
 * The replay viewer's page: opens a logged game from a file or from the server (the evaluation
 * report links here as ?game=<id>&event=<n>; the admin page as ?game=<id>&live=1, to follow a
 * game being played) and hands it to the viewer.
 */
import '../styles.css';
import { h } from '../ui/dom';
import { WorldRenderer } from '../world/WorldRenderer';
import { acceptDroppedFiles } from './files';
import { hook } from './hook';
import { bindKeys } from './keys';
import { SidePanel } from './panel';
import { Picker } from './picker';
import { loadRecording } from './recording';
import { ServerError, fetchLog, storedToken } from './server';
import { StatusBar } from './status';
import { Viewer } from './viewer';

const app = document.getElementById('app')!;
const worldElement = h('div', { class: 'world replay-world' }, h('div', { class: 'replay-empty' }, 'No game open'));
const openButton = h('button', { type: 'button', class: 'secondary replay-open', onclick: () => picker.open() }, 'Open a game…');
const status = new StatusBar(openButton);
const panel = new SidePanel();
const renderer = new WorldRenderer(worldElement);
const viewer = new Viewer(renderer, status, panel);

/**
 * A game asked for in the address: opened from the server as soon as there is a token, or, when
 * the server does not have it (an evaluation report over local logs), at its event once the
 * person opens its log file.
 */
let pending: { gameId: string; cursor: number } | null = null;

const picker = new Picker({
  openFile: (file) => void openFile(file),
  openServerGame: (gameId) => void openServerGame(gameId, 0),
  tokenEntered: () => {
    if (pending) void openServerGame(pending.gameId, pending.cursor);
    else picker.refreshGames();
  },
  hasGame: () => viewer.hasGame,
});

worldElement.append(viewer.controls.viewSwitch);
app.append(
  status.element,
  h('main', { class: 'game replay' }, h('section', { class: 'replay-stage' }, worldElement, viewer.controls.element), panel.element),
  picker.element,
);
// The overviews draw the board below the view buttons, which sit over the world's top.
const { viewSwitch } = viewer.controls;
renderer.setOverviewBand(viewSwitch.offsetTop * 1.5 + viewSwitch.offsetHeight);
// For tests: where the overviews draw the board and its cards.
(window as unknown as { __overview: unknown }).__overview = () => renderer.overviewLayout();
acceptDroppedFiles(document.body, (file) => void openFile(file));
bindKeys(viewer, () => !picker.isOpen);

/** Replays `text` and shows it; a log that does not replay leaves whatever was open as it was. */
function openText(text: string, source: string, cursor = 0): void {
  let recording;
  try {
    recording = loadRecording(text);
  } catch (error) {
    // A LogError's message names the line: "line 8: outcome differs from the rules: ...".
    fail(`Cannot replay ${source}: ${(error as Error).message}`);
    return;
  }
  if (pending?.gameId === recording.header.gameId) {
    cursor = Math.min(pending.cursor, recording.events.length);
    pending = null;
  }
  hook.error = null;
  picker.clearMessage();
  picker.close();
  document.body.classList.add('replay-open');
  viewer.open(recording, cursor);
}

async function openFile(file: File): Promise<void> {
  let text: string;
  try {
    text = await file.text();
  } catch (error) {
    fail(`Cannot read ${file.name}: ${(error as Error).message}`);
    return;
  }
  openText(text, file.name);
}

async function openServerGame(gameId: string, cursor: number): Promise<void> {
  const token = storedToken();
  if (!token) {
    pending = { gameId, cursor };
    picker.askForToken(`Enter the admin token to open game ${gameId}.`);
    return;
  }
  picker.showNotice(`Loading game ${gameId}…`);
  let text: string;
  try {
    text = await fetchLog(token, gameId);
  } catch (error) {
    const message = `Cannot load game ${gameId}: ${(error as Error).message}`;
    if (error instanceof ServerError && error.notFound) {
      // The matching log file, once opened, shows the asked-for event.
      pending = { gameId, cursor };
      hook.error = message;
      picker.open();
      picker.showNotice(`Game ${gameId} is not on this server. Open its log file (${gameId}.jsonl) to see it at event ${cursor}.`);
      return;
    }
    if (!(error instanceof ServerError && error.badToken)) return fail(message);
    // Ask for another token, then try this game again.
    hook.error = message;
    pending = { gameId, cursor };
    picker.tokenRefused(message);
    return;
  }
  openText(text, `game ${gameId}`, cursor);
  if (live && viewer.recording?.header.gameId === gameId && viewer.recording.end === null) void follow(gameId, token, text);
}

/** How often a game being played is fetched again (?live=1). */
const LIVE_POLL_MS = 1500;

/**
 * Follows a game being played: its log is fetched again until its end line arrives, and the
 * viewer grows with it (at the newest state, unless the person stepped back).
 */
async function follow(gameId: string, token: string, text: string): Promise<void> {
  document.body.dataset.live = 'true';
  status.showLive(true);
  for (let known = text; ; ) {
    await new Promise((resolve) => setTimeout(resolve, LIVE_POLL_MS));
    if (viewer.recording?.header.gameId !== gameId) break;
    let next: string;
    try {
      next = await fetchLog(token, gameId);
    } catch {
      continue; // a moment without the server: try again at the next poll
    }
    if (next !== known) {
      known = next;
      // A log is cut back to a whole line only at its end: a half-written last line waits for the next poll.
      if (!next.endsWith('\n')) continue;
      viewer.extend(loadRecording(next));
    }
    if (viewer.recording?.end) break;
  }
  delete document.body.dataset.live;
  status.showLive(false);
}

function fail(message: string): void {
  hook.error = message;
  picker.open();
  picker.showError(message);
}

const query = new URLSearchParams(location.search);
const requested = query.get('game');
/** ?live=1: a game still being played is followed as it goes on (the admin page's Watch links). */
const live = query.get('live') === '1';
if (requested) void openServerGame(requested, Number(query.get('event') ?? 0) || 0);
else picker.open();
