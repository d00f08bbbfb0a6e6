/**
 * The chaos soak's load (bench/soak.ts): game slots, each playing game after game with two
 * @colyseus/sdk clients that act from their views as a careless player would (a legal action
 * picked at random). Each client keeps, per game, the actions it saw acknowledged: an action is
 * acknowledged when the view it caused reached the client (the server writes the log line before
 * it sends any view). Faults end games; a slot then starts a new one.
 */
import { Client, type Room } from '@colyseus/sdk';
import WebSocket from 'ws';
import type { PlayerAction } from '../shared/engine/actions';
import type { Role } from '../shared/engine/state';
import { ACTION_MESSAGE, applyViewMessage, ROOM_NAME, type ClientView, type SeatMessage, type ViewMessage } from '../shared/protocol/messages';

// Node 20 has no global WebSocket, and the SDK's reconnection looks for one.
(globalThis as { WebSocket?: unknown }).WebSocket ??= WebSocket;

/** What one client did in one game. */
export interface PlayedSeat {
  readonly roomId: string;
  readonly role: Role;
  readonly playerId: string;
  /** The study's participant id, for a study worker's seat. */
  readonly participantId?: string;
  /** Actions acknowledged by a view, in order. */
  readonly acknowledged: PlayerAction[];
  /** Whether the client saw the game end (its view's phase `ended`). */
  ended: boolean;
}

export interface LoadOptions {
  /** The server processes' URLs; a game's two players join through different ones. */
  readonly urls: readonly string[];
  readonly slots: number;
  /** Mean pause before a player's action. */
  readonly thinkMs: number;
  /** A game that shows no progress for this long is left (its players leave). */
  readonly stuckMs: number;
  /** Study slots: a pair of new study workers for each game, seated through the study API. */
  readonly study?: { readonly slots: number; readonly newPair: (slot: number, round: number) => Promise<readonly StudyWorker[]>; readonly id: string };
}

/** A study worker ready to play: its session token and participant id. */
export interface StudyWorker {
  readonly token: string;
  readonly participantId: string;
}

export interface LoadFigures {
  games: number;
  finished: number;
  joinFailures: number;
  refusals: number;
  leftUnexpectedly: number;
  stuck: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A player in one game: its view, and the action it waits to see acknowledged. */
class Seat {
  view: ClientView | null = null;
  played: PlayedSeat | null = null;
  pending: PlayerAction | null = null;
  /** The private game's code, from the seat message. */
  code = '';
  closed = false;
  lastProgress = Date.now();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    readonly room: Room,
    private readonly figures: LoadFigures,
    private readonly thinkMs: number,
    participantId: string | undefined,
  ) {
    room.reconnection.enabled = false;
    room.onMessage('seat', (message: SeatMessage) => {
      if (message.code) this.code = message.code;
      this.played ??= { roomId: room.roomId, role: message.role, playerId: message.playerId, ...(participantId && { participantId }), acknowledged: [], ended: false };
    });
    room.onMessage('view', (message: ViewMessage) => this.onView(message));
    room.onMessage('error', (error: { refused?: string }) => {
      if (this.pending && error.refused !== undefined) {
        this.figures.refusals += 1;
        this.pending = null;
        this.schedule();
      }
    });
    room.onMessage('*', () => {});
    room.onLeave(() => {
      this.closed = true;
      this.stop();
    });
  }

  private onView(message: ViewMessage): void {
    this.view = applyViewMessage(this.view, message);
    this.lastProgress = Date.now();
    if (this.pending && this.view.phase === 'playing') this.played?.acknowledged.push(this.pending);
    this.pending = null;
    if (this.view.phase === 'ended' && this.played) this.played.ended = true;
    this.schedule();
  }

  /** Acts after a think time when it is this player's turn and nothing is pending. */
  private schedule(): void {
    if (this.timer || this.pending || this.closed) return;
    const view = this.view;
    if (!view || view.phase !== 'playing' || view.turn.role !== view.role) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      const now = this.view;
      if (this.pending || this.closed || !now || now.phase !== 'playing' || now.turn.role !== now.role) return;
      const action = carelessAction(now);
      if (!action) return;
      this.pending = action;
      this.room.send(ACTION_MESSAGE, action);
    }, this.thinkMs * (0.5 + Math.random()));
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}

/** A legal action picked as a careless player would: mostly moves, an instruction now and then, DONE or End Turn to move on. */
export function carelessAction(view: ClientView): PlayerAction | null {
  const { legal } = view;
  const move = legal.moves.length > 0 ? legal.moves[Math.floor(Math.random() * legal.moves.length)]! : null;
  if (view.role === 'leader') {
    const queued = view.instructions.some((instruction) => instruction.status !== 'done');
    if (legal.instruction && (!queued || Math.random() < 0.1)) return { type: 'instruction', text: `go to the card ${Math.floor(Math.random() * 100)}` };
    if (move && Math.random() < 0.7) return { type: 'move', move };
    if (legal.endTurn) return { type: 'endTurn' };
    return move ? { type: 'move', move } : null;
  }
  if (move && Math.random() < 0.85) return { type: 'move', move };
  if (legal.done) return { type: 'done' };
  return move ? { type: 'move', move } : null;
}

async function leave(room: Room): Promise<void> {
  await Promise.race([room.leave(true).catch(() => {}), sleep(3000)]);
}

export class SoakLoad {
  readonly figures: LoadFigures = { games: 0, finished: 0, joinFailures: 0, refusals: 0, leftUnexpectedly: 0, stuck: 0 };
  /** Every seat played, in every game. */
  readonly seats: PlayedSeat[] = [];
  private stopping = false;
  private running: Promise<unknown> | null = null;
  private readonly clients: Client[];

  constructor(private readonly options: LoadOptions) {
    this.clients = options.urls.map((url) => new Client(url));
  }

  start(): void {
    const { slots, study } = this.options;
    this.running = Promise.all(Array.from({ length: slots + (study?.slots ?? 0) }, (_, slot) => this.runSlot(slot, slot >= slots)));
  }

  /** No new games; the games in play go on until they end or `graceMs` has passed, then their players leave. */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    this.graceUntil = Date.now() + graceMs;
    await this.running;
  }

  private graceUntil = Infinity;

  private async runSlot(slot: number, inStudy: boolean): Promise<void> {
    await sleep(slot * 200);
    for (let round = 0; !this.stopping; round++) {
      try {
        await this.playGame(slot, round, inStudy);
      } catch {
        this.figures.joinFailures += 1;
        await sleep(1000);
      }
    }
  }

  /** The two clients of a slot join through different processes, turn by turn. */
  private client(slot: number, round: number, which: 0 | 1): Client {
    return this.clients[(slot + round + which) % this.clients.length]!;
  }

  private async seatsOfGame(slot: number, round: number, inStudy: boolean): Promise<Seat[]> {
    const { thinkMs } = this.options;
    if (inStudy) {
      const study = this.options.study!;
      const workers = await study.newPair(slot, round);
      const seats: Seat[] = [];
      try {
        for (const [i, worker] of workers.entries()) {
          const url = this.options.urls[(slot + round + i) % this.options.urls.length]!;
          const reservation = await reserve(url, study.id, worker.token);
          seats.push(new Seat(await this.client(slot, round, i as 0 | 1).consumeSeatReservation(reservation), this.figures, thinkMs, worker.participantId));
        }
      } catch (error) {
        await Promise.all(seats.map((seat) => leave(seat.room)));
        throw error;
      }
      return seats;
    }
    const leader = new Seat(await this.client(slot, round, 0).joinOrCreate(ROOM_NAME, { role: 'leader', private: true }), this.figures, thinkMs, undefined);
    try {
      const code = await waitForCode(leader);
      return [leader, new Seat(await this.client(slot, round, 1).joinOrCreate(ROOM_NAME, { role: 'follower', code }), this.figures, thinkMs, undefined)];
    } catch (error) {
      await leave(leader.room);
      throw error;
    }
  }

  private async playGame(slot: number, round: number, inStudy: boolean): Promise<void> {
    const seats = await this.seatsOfGame(slot, round, inStudy);
    this.figures.games += 1;
    const { stuckMs } = this.options;
    try {
      for (;;) {
        await sleep(200);
        if (seats.every((seat) => seat.played?.ended)) {
          this.figures.finished += 1;
          return;
        }
        if (seats.some((seat) => seat.closed)) {
          this.figures.leftUnexpectedly += 1;
          return;
        }
        if (Date.now() - Math.max(...seats.map((seat) => seat.lastProgress)) > stuckMs) {
          this.figures.stuck += 1;
          return;
        }
        if (this.stopping && Date.now() > this.graceUntil) return;
      }
    } finally {
      for (const seat of seats) {
        seat.stop();
        if (seat.played) this.seats.push(seat.played);
      }
      await Promise.all(seats.map((seat) => leave(seat.room)));
    }
  }
}

async function waitForCode(seat: Seat): Promise<string> {
  const deadline = Date.now() + 10_000;
  while (seat.code === '') {
    if (Date.now() > deadline || seat.closed) throw new Error('the private game sent no code');
    await sleep(20);
  }
  return seat.code;
}

/** A study worker's request to play: its seat reservation. */
async function reserve(url: string, studyId: string, token: string): Promise<Parameters<Client['consumeSeatReservation']>[0]> {
  const response = await fetch(`${url}/api/studies/${studyId}/play`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: '{}' });
  const answer = (await response.json()) as { reservation: Parameters<Client['consumeSeatReservation']>[0] };
  if (!response.ok) throw new Error(`play: ${response.status} ${JSON.stringify(answer)}`);
  return answer.reservation;
}
