/** The listeners of a game connection's events, and their calls (no network code: the tutorial uses it too). */
import type { SessionEvents } from './session';

type Listener<K extends keyof SessionEvents> = SessionEvents[K];

export class Events {
  private readonly listeners: { [K in keyof SessionEvents]: Listener<K>[] } = {
    seat: [], start: [], state: [], notice: [], refused: [], queue: [], connection: [],
  };

  on<K extends keyof SessionEvents>(event: K, listener: Listener<K>): void {
    this.listeners[event].push(listener);
  }

  emit<K extends keyof SessionEvents>(event: K, ...args: Parameters<Listener<K>>): void {
    for (const listener of this.listeners[event]) (listener as (...a: Parameters<Listener<K>>) => void)(...args);
  }
}
