/**
 * The seat this browser holds, kept across a refresh or a closed tab: the room's reconnection
 * token, which the server accepts within its reconnection window (`serve --reconnect-seconds`).
 * Kept in localStorage, so a tab opened again finds it; a second tab that tries it while the first
 * is connected is refused by the server (409). Forgotten when the game ends or the player leaves.
 */
import type { Role } from '../../../shared/engine/state';

const STORAGE_KEY = 'cerealbar.seat';

export interface SavedSeat {
  readonly token: string;
  readonly role: Role;
  /** A private game's code, to show again while waiting for the partner. */
  readonly code?: string;
}

export function loadSeat(): SavedSeat | null {
  try {
    const saved = JSON.parse(localStorage.getItem(STORAGE_KEY) ?? 'null') as Partial<SavedSeat> | null;
    if (saved && typeof saved.token === 'string' && (saved.role === 'leader' || saved.role === 'follower')) {
      return { token: saved.token, role: saved.role, ...(typeof saved.code === 'string' && { code: saved.code }) };
    }
  } catch {
    // Unreadable or refused storage: no seat to come back to.
  }
  return null;
}

export function saveSeat(seat: SavedSeat): void {
  try {
    localStorage.setItem(STORAGE_KEY, JSON.stringify(seat));
  } catch {
    // Not kept: a refresh will then lose the seat, as without storage.
  }
}

export function forgetSeat(): void {
  try {
    localStorage.removeItem(STORAGE_KEY);
  } catch {
    // Nothing was kept.
  }
}
