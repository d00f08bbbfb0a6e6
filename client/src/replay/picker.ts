/**
 * Choosing a game to replay: a local log file (the file picker; dropping a file anywhere on the
 * page works too), or a game from the server's list, which needs the admin token. Failures to
 * open a game are shown here, and the picker stays usable.
 */
import { h, setChildren } from '../ui/dom';
import { ServerError, listGames, storeToken, storedToken, type GameSummary, type SeatSummary } from './server';

export interface PickerActions {
  openFile(file: File): void;
  openServerGame(gameId: string): void;
  /** A token was entered (and stored for this tab); call refreshGames() to list the games with it. */
  tokenEntered(): void;
  /** A game is open behind the picker, so it may be closed. */
  hasGame(): boolean;
}

export class Picker {
  readonly element: HTMLElement;
  private readonly message = h('div', { class: 'banner replay-message', role: 'alert', hidden: true });
  private readonly tokenInput = h('input', { type: 'password', class: 'replay-token', placeholder: 'Admin token', autocomplete: 'off', 'aria-label': 'Admin token' });
  private readonly games = h('ul', { class: 'replay-games' });
  private readonly moreButton: HTMLButtonElement;
  private readonly closeButton: HTMLButtonElement;
  private nextOffset: number | null = null;
  /** Counts list refreshes, so that the answer to an older one is dropped. */
  private listing = 0;

  constructor(private readonly actions: PickerActions) {
    const fileInput = h('input', { type: 'file', class: 'replay-file', accept: '.jsonl,.json,.txt,application/x-ndjson', 'aria-label': 'Log file' });
    fileInput.addEventListener('change', () => {
      const file = fileInput.files?.[0];
      // Cleared so that choosing the same file again (after fixing it) opens it again.
      fileInput.value = '';
      if (file) actions.openFile(file);
    });
    const tokenForm = h(
      'form',
      {
        class: 'row replay-token-form',
        onsubmit: (event) => {
          event.preventDefault();
          this.submitToken();
        },
      },
      this.tokenInput,
      h('button', { type: 'submit' }, 'List games'),
    );
    this.moreButton = h('button', { type: 'button', class: 'secondary', hidden: true, onclick: () => void this.loadGames(this.nextOffset ?? 0) }, 'More games');
    this.closeButton = h('button', { type: 'button', class: 'secondary replay-close', onclick: () => this.close() }, 'Close');
    this.tokenInput.value = storedToken() ?? '';
    this.element = h(
      'div',
      { class: 'replay-picker', hidden: true },
      h(
        'div',
        { class: 'lobby replay-picker-card', role: 'dialog', 'aria-label': 'Open a game' },
        h('div', { class: 'replay-picker-title' }, h('h1', {}, 'Replay a game'), this.closeButton),
        h('p', { class: 'subtitle' }, 'Every state is rebuilt by the game engine from the log, so you see exactly what the players saw.'),
        this.message,
        h('fieldset', {}, h('legend', {}, 'A log file'), fileInput, h('p', { class: 'meta' }, 'Or drop a .jsonl log anywhere on this page.')),
        h('fieldset', {}, h('legend', {}, 'A game on this server'), tokenForm, this.games, this.moreButton),
      ),
    );
  }

  get isOpen(): boolean {
    return !this.element.hidden;
  }

  open(): void {
    this.closeButton.hidden = !this.actions.hasGame();
    this.element.hidden = false;
    if (storedToken() && this.games.childElementCount === 0) this.refreshGames();
  }

  refreshGames(): void {
    this.listing++;
    setChildren(this.games);
    void this.loadGames(0);
  }

  close(): void {
    this.element.hidden = true;
  }

  showError(text: string): void {
    this.showMessage(text, 'error');
  }

  showNotice(text: string): void {
    this.showMessage(text, 'notice');
  }

  clearMessage(): void {
    this.message.hidden = true;
  }

  /** Opens the picker with the token field ready, saying why it is needed. */
  askForToken(reason: string): void {
    this.open();
    this.showNotice(reason);
    this.tokenInput.focus();
  }

  /** The server refused the stored token: forget it and ask again. */
  tokenRefused(text: string): void {
    storeToken(null);
    this.open();
    this.showError(text);
    this.tokenInput.focus();
    this.tokenInput.select();
  }

  private showMessage(text: string, kind: 'error' | 'notice'): void {
    this.message.classList.toggle('error', kind === 'error');
    setChildren(this.message, h('span', { class: 'text' }, text));
    this.message.hidden = false;
  }

  private submitToken(): void {
    const token = this.tokenInput.value.trim();
    if (!token) {
      this.showError('Enter the admin token first.');
      return;
    }
    storeToken(token);
    this.clearMessage();
    this.actions.tokenEntered();
  }

  private async loadGames(offset: number): Promise<void> {
    const token = storedToken();
    if (!token) return;
    const listing = this.listing;
    try {
      const page = await listGames(token, offset);
      if (listing !== this.listing) return;
      if (offset === 0) setChildren(this.games, ...(page.games.length > 0 ? [] : [h('li', { class: 'empty' }, 'No games on this server yet.')]));
      this.games.append(...page.games.map((game) => this.gameItem(game)));
      this.nextOffset = page.nextOffset;
      this.moreButton.hidden = page.nextOffset === null;
    } catch (error) {
      if (error instanceof ServerError && error.badToken) this.tokenRefused(error.message);
      else this.showError((error as Error).message);
    }
  }

  private gameItem(game: GameSummary): HTMLElement {
    const ended = game.endReason ?? 'in progress';
    return h(
      'li',
      {},
      h(
        'button',
        { type: 'button', class: 'secondary', 'data-game': game.gameId, onclick: () => this.actions.openServerGame(game.gameId) },
        h('span', { class: 'replay-game-name' }, game.gameId),
        h('span', { class: 'replay-game-meta' }, `${new Date(game.startedAt).toLocaleString()} · ${game.pool} · score ${game.score} · ${ended}`),
        h('span', { class: 'replay-game-players' }, playersText(game.seats)),
      ),
    );
  }
}

/** Who played, leader first: "Leader: a person · Follower: a bot". */
export function playersText(seats: readonly SeatSummary[]): string {
  return [...seats]
    .sort((a, b) => (a.role === b.role ? 0 : a.role === 'leader' ? -1 : 1))
    .map((seat) => `${seat.role === 'leader' ? 'Leader' : 'Follower'}: ${seat.kind === 'bot' ? 'a bot' : 'a person'}`)
    .join(' · ');
}
