/** What browser tests wait on and read (window.__replay), kept up to date by the viewer. */
export interface ReplayHook {
  /** A game is open and its first frame has been drawn. */
  ready: boolean;
  /** Events in the open game (the cursor runs from 0 to this). */
  events: number;
  cursor: number;
  score: number;
  /** The last failure to open a game, in the words the page shows; null after a success. */
  error: string | null;
}

declare global {
  interface Window {
    __replay: ReplayHook;
  }
}

export const hook: ReplayHook = { ready: false, events: 0, cursor: 0, score: 0, error: null };
window.__replay = hook;
