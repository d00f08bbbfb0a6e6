/**
 * The server's metrics in Prometheus' text format (prom-client), for `/metrics` (with the admin
 * token): games running and finished, players connected, actions and refusals, how long an action
 * takes from its message to the views sent, how long a log line takes to write, and Node's own
 * (event-loop lag, memory, CPU). One registry per server, so that several servers in one process
 * (the tests) keep apart.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Admission } from './admission';
import type { AgentGames } from './rooms/agentGames';

/** What a live game room tells the gauges when they are read. */
export interface LiveRoom {
  readonly playing: boolean;
  readonly playersConnected: number;
}

/** Seconds: an action is handled in well under a millisecond; a log write on a slow disk can take tens. */
const FAST_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];

export class GameMetrics {
  readonly registry = new Registry();
  private readonly rooms = new Set<LiveRoom>();
  readonly gamesFinished: Counter<'reason'>;
  readonly actions: Counter<'actor' | 'type'>;
  readonly refusals: Counter<'code'>;
  readonly actionSeconds: Histogram;
  readonly logWriteSeconds: Histogram;

  constructor() {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    const rooms = this.rooms;
    new Gauge({
      name: 'cerealbar_games_running',
      help: 'Games being played (both players seated, not ended).',
      registers,
      collect() {
        this.set([...rooms].filter((room) => room.playing).length);
      },
    });
    new Gauge({
      name: 'cerealbar_players_connected',
      help: 'Players connected to a game room, waiting or playing.',
      registers,
      collect() {
        this.set([...rooms].reduce((sum, room) => sum + room.playersConnected, 0));
      },
    });
    this.gamesFinished = new Counter({ name: 'cerealbar_games_finished_total', help: 'Games ended, by how they ended (the log end reason).', labelNames: ['reason'], registers });
    this.actions = new Counter({ name: 'cerealbar_actions_total', help: 'Actions the engine accepted, by actor and type.', labelNames: ['actor', 'type'], registers });
    this.refusals = new Counter({ name: 'cerealbar_refusals_total', help: "Players' messages refused, by error code.", labelNames: ['code'], registers });
    this.actionSeconds = new Histogram({
      name: 'cerealbar_action_seconds',
      help: "From an action's arrival to the players' views sent (engine step, log write, views).",
      buckets: FAST_BUCKETS,
      registers,
    });
    this.logWriteSeconds = new Histogram({ name: 'cerealbar_log_write_seconds', help: 'Writing one event line of a game log.', buckets: FAST_BUCKETS, registers });
  }

  /** The admission state of the process (admission.ts): whether it takes new games, its event loop's delay, the new games it refused. */
  watchAdmission(admission: Admission): void {
    const registers = [this.registry];
    const refused = new Counter({
      name: 'cerealbar_new_games_refused_total',
      help: 'New games refused as busy at matchmaking, by why this process was busy (games: --max-games; event-loop: --max-event-loop-delay-ms).',
      labelNames: ['reason'],
      registers,
    });
    new Gauge({
      name: 'cerealbar_admission_open',
      help: 'Whether this process takes new games now (1), or is busy (0): too many games, or its event loop runs late.',
      registers,
      collect() {
        this.set(admission.busy() === null ? 1 : 0);
      },
    });
    new Gauge({
      name: 'cerealbar_event_loop_delay_p99_seconds',
      help: "The p99 of the event loop's delay over the last window, as admission reads it.",
      registers,
      collect() {
        this.set(admission.eventLoopDelayP99Ms() / 1000);
      },
    });
    admission.onRefused((reason) => refused.inc({ reason }));
  }

  /** The joins asking for the server's agent partner that its limits refused (rooms/agentGames.ts), by which limit. */
  watchAgentGames(agentGames: AgentGames): void {
    const refused = new Counter({
      name: 'cerealbar_agent_games_refused_total',
      help: "Joins asking for the server's agent partner refused at matchmaking, by the limit they met (per-client: --agent-games-per-address; server: --max-agent-games; llm-budget: --llm-max-calls-total or --llm-max-cost).",
      labelNames: ['reason'],
      registers: [this.registry],
    });
    agentGames.onRefused((reason) => refused.inc({ reason }));
  }

  track(room: LiveRoom): void {
    this.rooms.add(room);
  }

  untrack(room: LiveRoom): void {
    this.rooms.delete(room);
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

/** How long `work` takes, observed in `histogram` (seconds), when there is one. */
export function timed<T>(histogram: Histogram | undefined, work: () => T): T {
  if (!histogram) return work();
  const end = histogram.startTimer();
  try {
    return work();
  } finally {
    end();
  }
}
