/**
 * Agents in other processes, in any language, in either seat, speaking the JSON Lines protocol of
 * protocol.ts over their stdin and stdout (the process itself is agentProcess.ts). Everything an
 * agent does wrong ends in a typed AgentError (and the agent is killed, since it can no longer be
 * trusted to be in step).
 */
import type { KnownMap } from '../../engine/playerView';
import type { Role } from '../../engine/state';
import { describeLeaderObservation, describeObservation } from '../language';
import { plainObservation } from '../observation';
import {
  actSchema,
  agentHelloSchema,
  hostHello,
  isProblem,
  leaderActionReader,
  PROTOCOL_NAME,
  readAnswer,
  readFollowerAction,
  readySchema,
  SEAT_VERSIONS,
  type AgentHello,
  type AnswerProblem,
  type WireLeaderObservation,
  type WireObservation,
} from '../protocol';
import type { AgentAction, Answer, EpisodeStart, FollowerAgent, FollowerObservation, LeaderAgent, LeaderAgentAction, LeaderObservation } from '../types';
import { AgentError, AgentProcess, quote } from './agentProcess';

export { AGENT_ERROR_KINDS, AgentError, shellScript, type AgentErrorDetails, type AgentErrorKind } from './agentProcess';

export interface ProcessAgentOptions {
  /** How long the agent may take to answer a reset or an observation. */
  readonly stepTimeoutMs?: number;
  /** How long the agent may take to start and answer the hello. */
  readonly handshakeTimeoutMs?: number;
  /** How long the agent has to exit by itself after close before it is killed. */
  readonly closeGraceMs?: number;
  readonly cwd?: string;
  readonly env?: NodeJS.ProcessEnv;
}

export const DEFAULT_STEP_TIMEOUT_MS = 5_000;
export const DEFAULT_HANDSHAKE_TIMEOUT_MS = 10_000;
export const DEFAULT_CLOSE_GRACE_MS = 1_000;

/**
 * What a program agent is in either seat: its process, its handshake and its episodes. The agent
 * process starts, and the handshake begins, in the constructor. What the agent declares in its
 * hello (its name, whether it wants oracle observations or the recording) is known once
 * `handshake()` resolves; `reset()` waits for it, but a host that reads `needsRecording` or
 * `wantsOracleObservation` before the first reset must `await agent.handshake()` first.
 */
abstract class ProgramAgent {
  protected readonly child: AgentProcess;
  private readonly handshaking: Promise<void>;
  private hello: AgentHello | null = null;
  protected started = false;
  /** The map last sent in this episode: it is sent again only when it changed. */
  protected sentMap: KnownMap | null = null;

  /** `command` is run with /bin/sh -c: "python3 my_agent.py --greedy". */
  constructor(
    readonly command: string,
    readonly role: Role,
    protected readonly options: ProcessAgentOptions = {},
  ) {
    this.child = new AgentProcess(command, options.cwd, options.env);
    this.handshaking = this.greet();
    // Failures surface where the handshake is awaited; unawaited, they must not crash the host.
    this.handshaking.catch(() => {});
  }

  /** The name the agent gave in its hello (its command line until then). */
  get name(): string {
    return this.hello?.name ?? this.command;
  }

  /** The agent's own version, when its hello gave one. */
  get version(): string | undefined {
    return this.hello?.agentVersion;
  }

  /** The protocol version the agent speaks (known after the handshake). */
  get protocolVersion(): number | undefined {
    return this.hello?.version;
  }

  get wantsOracleObservation(): boolean {
    return this.hello?.oracle ?? false;
  }

  get needsRecording(): boolean {
    return this.hello?.needsRecording ?? false;
  }

  /** The agent's process id (its process group too), for checks that it is gone after close. */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Resolves once the agent answered the hello correctly; rejects with an AgentError otherwise. */
  handshake(): Promise<void> {
    return this.handshaking;
  }

  async reset(start: EpisodeStart): Promise<void> {
    await this.handshaking;
    this.started = true;
    this.sentMap = null;
    // Privileged data (the static map, the recording) goes only to agents that asked for it.
    const episode: EpisodeStart = this.needsRecording ? start : { episodeId: start.episodeId };
    await this.child.exchange({ type: 'reset', role: this.role, episode }, 'ready', readySchema, this.stepTimeoutMs);
  }

  /** Asks the agent to exit, and kills it (and anything it started) if it has not after the grace period. */
  async close(): Promise<void> {
    await this.child.stop(this.options.closeGraceMs ?? DEFAULT_CLOSE_GRACE_MS);
  }

  /** Sends an observation (its map only when it changed) and reads the plan answered, each action read by `readAction`. */
  protected async ask<O extends { readonly map: KnownMap }, A>(
    observation: O,
    text: string,
    readAction: (value: unknown, where: string) => A | AnswerProblem,
  ): Promise<A[]> {
    if (!this.started) throw new Error(`act() on agent ${JSON.stringify(this.name)} before reset()`);
    const { map, ...rest } = observation;
    const wire = (map === this.sentMap ? rest : { ...rest, map }) as unknown as WireObservation | WireLeaderObservation;
    this.sentMap = map;
    const answer = await this.child.exchange({ type: 'observe', observation: wire, text }, 'act', actSchema, this.stepTimeoutMs);
    const plan = readAnswer(answer, readAction);
    if (isProblem(plan)) throw await this.child.fail(new AgentError(plan.kind, this.name, plan.message, { line: quote(JSON.stringify(answer)) }));
    return plan;
  }

  private async greet(): Promise<void> {
    const hello = await this.child.exchange(hostHello(this.role), 'hello', agentHelloSchema, this.options.handshakeTimeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS);
    const versions = SEAT_VERSIONS[this.role];
    if (hello.protocol !== PROTOCOL_NAME || !versions.includes(hello.version)) {
      const speaks = `speaks ${JSON.stringify(hello.protocol)} version ${hello.version}`;
      const host = `the host speaks ${JSON.stringify(PROTOCOL_NAME)} version ${versions.join(' or ')} in the ${this.role}'s seat`;
      throw await this.child.fail(new AgentError('protocol', this.command, `${speaks}; ${host}`));
    }
    this.hello = hello;
    this.child.label = hello.name;
  }

  protected get stepTimeoutMs(): number {
    return this.options.stepTimeoutMs ?? DEFAULT_STEP_TIMEOUT_MS;
  }
}

/** A follower agent in another process. */
export class ProcessAgent extends ProgramAgent implements FollowerAgent {
  constructor(command: string, options: ProcessAgentOptions = {}) {
    super(command, 'follower', options);
  }

  async act(observation: FollowerObservation): Promise<Answer<AgentAction>> {
    const shown = this.wantsOracleObservation ? observation : withoutOracle(observation);
    const plan = await this.ask(shown, describeObservation(shown), readFollowerAction);
    // One action is answered as one, so that hosts and tests that play one at a time see it as sent.
    return plan.length === 1 ? plan[0] : plan;
  }
}

/** A leader agent in another process (protocol version 3). */
export class ProcessLeaderAgent extends ProgramAgent implements LeaderAgent {
  declare readonly role: 'leader';

  constructor(command: string, options: ProcessAgentOptions = {}) {
    super(command, 'leader', options);
  }

  async act(observation: LeaderObservation): Promise<Answer<LeaderAgentAction>> {
    const plan = await this.ask(observation, describeLeaderObservation(observation), leaderActionReader(observation.maxInstructionLength));
    return plan.length === 1 ? plan[0] : plan;
  }
}

function withoutOracle(observation: FollowerObservation): FollowerObservation {
  if (!observation.oracle) return observation;
  const { oracle: _omitted, ...rest } = plainObservation(observation);
  return rest;
}
