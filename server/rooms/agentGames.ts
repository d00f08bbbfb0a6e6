/**
 * Games with the server's agent partner (botFollower, botLeader) are a resource: each holds an
 * agent for as long as it lasts, a program's process or an LLM's paid calls, and any client may
 * ask for one. So a join asking for one is admitted at matchmaking (the room's onAuth) only within
 * limits, and refused at once in words otherwise (P-149, P-150):
 * - the agent games one client has at once, by the keyed hash of its address and by its worker id
 *   when it gives one (429);
 * - the agent games of the whole server (503);
 * - for an agent that calls an LLM, the server's LLM budget (403; server/llmBudget.ts).
 * The games are counted from the rooms' listings, which every process shares (Redis), so the limits
 * hold across processes. A join admitted counts as pending in the process that admitted it until
 * its matchmaking request is answered, by when its game's listing is stored (a seat reservation
 * waits for it), or a listing names it: joins arriving at once are counted too.
 */
import { randomUUID } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { ServerError } from '@colyseus/core';
import type { RunSpend } from '../../shared/agents/node/llm/agent';
import type { Role } from '../../shared/engine/state';
import { agentSeatAsked, type JoinOptions } from '../../shared/protocol/messages';
import type { MatchmakingRequest } from '../http/matchmakingClient';
import { agentGameListings } from './listing';
import type { AgentJoin } from './queue';

/** Agent games one client may have at once, unless the server says otherwise (`serve --agent-games-per-address`). */
export const DEFAULT_AGENT_GAMES_PER_CLIENT = 2;

/** Agent games per core the whole server may have at once by default: a game's agent mostly waits for its turn. */
const AGENT_GAMES_PER_CORE = 8;

/** The whole server's agent games at once by default (`serve --max-agent-games`), sized to the machine. */
export function defaultMaxAgentGames(): number {
  return AGENT_GAMES_PER_CORE * availableParallelism();
}

/** The seats whose agent calls an LLM, and the budget they spend from. */
export interface LlmSeats {
  readonly roles: readonly Role[];
  readonly budget: RunSpend;
}

export interface AgentGameLimits {
  /** Agent games one client (an address, a worker id) may have at once, waiting or in play. */
  readonly perClient?: number;
  /** Agent games the whole server may have at once. */
  readonly total?: number;
  /** The LLM agents' budget, when the server's agents call an LLM and it has one. */
  readonly llm?: LlmSeats;
}

/** Why a join asking for an agent partner was refused, as the metrics count it. */
export type AgentGameRefusal = 'per-client' | 'server' | 'llm-budget';

/** What the room's onAuth hands the seat reservation of an admitted agent join (Colyseus's auth data). */
export interface AgentAdmission {
  readonly agentJoin: AgentJoin;
}

/** The agent join in a seat reservation's auth data, if it is one. */
export function agentJoinOf(authData: unknown): AgentJoin | undefined {
  return (authData as Partial<AgentAdmission> | undefined)?.agentJoin;
}

/** A game counted against the limits: its client, and its worker if it has one. */
interface Counted {
  readonly client: string;
  readonly workers: readonly string[];
}

export class AgentGames {
  readonly perClient: number;
  readonly total: number;
  /** Joins this process admitted, by the id of their matchmaking request (their ticket), until it is answered. */
  private readonly pending = new Map<string, Counted>();
  private readonly refusedListeners: ((reason: AgentGameRefusal) => void)[] = [];

  constructor(private readonly limits: AgentGameLimits = {}) {
    this.perClient = limits.perClient ?? DEFAULT_AGENT_GAMES_PER_CLIENT;
    this.total = limits.total ?? defaultMaxAgentGames();
  }

  /**
   * Admits a join of `request` (from the keyed hash of its address, clientAddress.ts) if it asks for
   * an agent partner: what its seat reservation carries, or null for a join without one. Rejects
   * with the refusal in words.
   */
  async admit(asked: JoinOptions, { client, id }: MatchmakingRequest): Promise<AgentAdmission | null> {
    const role = agentSeatAsked(asked);
    if (role === null) return null;
    const llm = this.limits.llm;
    if (llm?.roles.includes(role) && llm.budget.reached) {
      throw this.refuse('llm-budget', 403, `the server's budget for its LLM agent is spent, so it starts no new games with its agent ${role}: play with a person`);
    }
    const games = this.counted(await agentGameListings());
    const worker = asked.workerId;
    const yours = games.filter((game) => game.client === client || (worker !== undefined && game.workers.includes(worker))).length;
    if (yours >= this.perClient) {
      throw this.refuse(
        'per-client',
        429,
        `you already have ${yours} games with the server's agent going, the most one player (one address, or one worker id) may have at once: finish or leave one, then start another`,
      );
    }
    if (games.length >= this.total) {
      throw this.refuse('server', 503, `the server is running as many games with its agents as it can (${this.total}): play with a person, or try again in a few minutes`);
    }
    // A join the server's HTTP did not tag (none comes so) is counted once listed.
    if (id === null) return { agentJoin: { ticket: randomUUID(), client } };
    this.pending.set(id, { client, workers: worker === undefined ? [] : [worker] });
    return { agentJoin: { ticket: id, client } };
  }

  /** The matchmaking request `id` was answered: its game, if one was made, is listed by now. */
  answered(id: string): void {
    this.pending.delete(id);
  }

  onRefused(listener: (reason: AgentGameRefusal) => void): void {
    this.refusedListeners.push(listener);
  }

  /** The agent games to count: those listed and not ended, and the joins admitted here that no listing names yet. */
  private counted(listed: Awaited<ReturnType<typeof agentGameListings>>): Counted[] {
    const named = new Set(listed.map((listing) => listing.agentJoin.ticket));
    const live = listed.filter((listing) => listing.phase !== 'ended').map((listing) => ({ client: listing.agentJoin.client, workers: listing.workers }));
    return [...live, ...[...this.pending].flatMap(([ticket, join]) => (named.has(ticket) ? [] : [join]))];
  }

  private refuse(reason: AgentGameRefusal, status: number, message: string): ServerError {
    for (const listener of this.refusedListeners) listener(reason);
    return new ServerError(status, message);
  }
}
