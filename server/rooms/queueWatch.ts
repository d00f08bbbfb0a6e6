/**
 * The `queue` messages of a game waiting for a partner: its place in the matchmaking queue
 * (queue.ts), checked every second and sent to the waiting player whenever it changes.
 */
import { matchMaker, type Delayed, type Room } from '@colyseus/core';
import type { QueueMessage } from '../../shared/protocol/messages';
import { queuePlace } from './queue';

/** How often a waiting player's place in the matchmaking queue is checked. */
const QUEUE_POLL_MS = 1000;

export class QueueWatch {
  private timer: Delayed | null = null;
  /** The last `queue` message sent, so that only changes are sent. */
  private sent: QueueMessage | null = null;

  /** `code` is the private game's code ('' for quick play); `waiting` whether the game still waits for its partner. */
  constructor(
    private readonly room: Pick<Room, 'roomId' | 'roomName' | 'clock' | 'broadcast'>,
    private readonly code: string,
    private readonly waiting: () => boolean,
  ) {}

  /** Tells the waiting player its place in the matchmaking queue now, then whenever it changes. */
  watch(): void {
    this.sent = null;
    this.timer ??= this.room.clock.setInterval(() => void this.send(), QUEUE_POLL_MS);
    void this.send();
  }

  stop(): void {
    this.timer?.clear();
    this.timer = null;
  }

  private async send(): Promise<void> {
    // A game with a code queues only with games of that code: asked by code, the listings are
    // not all read (with Redis, reading them all is the dear part, and this runs every second).
    const rooms = await matchMaker.query({ name: this.room.roomName, ...(this.code && { code: this.code }) });
    if (!this.waiting()) return; // the game started during the query
    const place = queuePlace(this.room.roomId, rooms);
    if (!place || (place.position === this.sent?.position && place.waiting === this.sent.waiting)) return;
    this.sent = place;
    this.room.broadcast('queue', place);
  }
}
