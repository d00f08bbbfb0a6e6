/**
 * An agent program's process, for the program agents of processAgent.ts: it starts the command in
 * its own process group, sends JSON lines and reads the one answer line to each (checked against
 * the expected message's schema), keeps the end of its stderr for error messages, and kills the
 * whole group when the agent fails or is closed. Every fault is a typed AgentError; nothing the
 * program does can hang the host or leave a process behind.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import type { z } from 'zod';
import type { AgentMessageType, HostMessage } from '../protocol';

export const AGENT_ERROR_KINDS = ['crashed', 'timeout', 'garbage', 'illegal-action', 'protocol'] as const;
export type AgentErrorKind = (typeof AGENT_ERROR_KINDS)[number];

export interface AgentErrorDetails {
  /** crashed: how the process ended (null when it ended by a signal, or could not start). */
  readonly exitCode?: number | null;
  readonly signal?: string | null;
  /** crashed, timeout: the last lines the agent wrote to stderr. */
  readonly stderr?: string;
  /** garbage, protocol, illegal-action: the offending line, truncated. */
  readonly line?: string;
}

export class AgentError extends Error {
  override name = 'AgentError';
  constructor(
    readonly kind: AgentErrorKind,
    /** The agent's name, or its command line before the handshake told its name. */
    readonly agent: string,
    detail: string,
    readonly details: AgentErrorDetails = {},
  ) {
    const quoted = details.line !== undefined ? `: ${JSON.stringify(details.line)}` : '';
    super(`agent ${JSON.stringify(agent)} ${detail}${quoted}${details.stderr ? `; its last stderr lines:\n${details.stderr}` : ''}`);
  }
}

/** Longest answer line accepted: real answers are tens of bytes. */
const MAX_LINE_CHARS = 1 << 20;
/** How much of an agent's stderr is kept for error messages (the end of it). */
const STDERR_TAIL_CHARS = 4_000;
const STDERR_TAIL_LINES = 10;
/** How much of an offending line an error quotes. */
const QUOTED_LINE_CHARS = 200;
/** After SIGKILL the kernel ends a process at once; this only bounds the wait for its exit event. */
const KILL_WAIT_MS = 2_000;
const GROUP_POLL_MS = 10;

/** An offending line as an error quotes it: its start. */
export function quote(line: string): string {
  return line.length > QUOTED_LINE_CHARS ? `${line.slice(0, QUOTED_LINE_CHARS)}...` : line;
}

/** Agent processes still running, killed when the host exits however it exits. */
const liveProcesses = new Set<AgentProcess>();
let exitHookInstalled = false;

function trackLive(agent: AgentProcess): void {
  if (!exitHookInstalled) {
    process.once('exit', () => liveProcesses.forEach((live) => live.killGroup()));
    exitHookInstalled = true;
  }
  liveProcesses.add(agent);
}

interface PendingLine {
  readonly resolve: (line: string) => void;
  readonly reject: (error: AgentError) => void;
  readonly timer: NodeJS.Timeout;
}

/** The child process: its lines, its stderr tail, its exit, and killing it. */
export class AgentProcess {
  label: string;
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly lines: string[] = [];
  private partialLine = '';
  private stderrTail = '';
  private pending: { readonly awaited: string; readonly waiter: PendingLine } | null = null;
  /** Set once stdout is closed and the process has exited: no line will come any more. */
  private ended: { readonly exitCode: number | null; readonly signal: string | null; readonly why?: string } | null = null;
  private failure: AgentError | null = null;
  private readonly exited: Promise<void>;
  private stopping: Promise<void> | null = null;

  constructor(command: string, cwd: string | undefined, env: NodeJS.ProcessEnv | undefined) {
    this.label = command;
    // Its own process group (detached), so that killing the group also ends whatever the shell started.
    this.child = spawn('/bin/sh', ['-c', shellScript(command)], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    trackLive(this);
    this.child.stdout.setEncoding('utf8');
    this.child.stderr.setEncoding('utf8');
    this.child.stdout.on('data', (chunk: string) => this.onStdout(chunk));
    this.child.stderr.on('data', (chunk: string) => {
      this.stderrTail = (this.stderrTail + chunk).slice(-STDERR_TAIL_CHARS);
    });
    // A write to an agent that has exited fails with EPIPE; the exit itself is what gets reported.
    this.child.stdin.on('error', () => {});
    this.exited = new Promise((resolve) => {
      this.child.once('exit', () => {
        liveProcesses.delete(this);
        resolve();
      });
      this.child.once('error', (error) => {
        liveProcesses.delete(this);
        this.onEnd(null, null, `could not be started: ${error.message}`);
        resolve();
      });
    });
    this.child.once('close', (exitCode, signal) => this.onEnd(exitCode, signal));
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Sends a message and reads the one answer line: a message of type `expected`, checked against `schema`. */
  async exchange<S extends z.ZodType>(message: HostMessage, expected: AgentMessageType, schema: S, timeoutMs: number): Promise<z.output<S>> {
    if (this.failure) throw this.failure;
    this.send(message);
    let line: string;
    try {
      line = await this.nextLine(`its answer to ${message.type}`, timeoutMs);
    } catch (error) {
      throw await this.fail(error as AgentError);
    }
    const value = parseObject(line);
    if (!value || typeof value.type !== 'string') {
      throw await this.fail(new AgentError('garbage', this.label, `answered ${message.type} with a line that is not a JSON message`, { line: quote(line) }));
    }
    if (value.type !== expected) {
      throw await this.fail(
        new AgentError('protocol', this.label, `answered ${message.type} with a ${JSON.stringify(value.type)} message; expected ${JSON.stringify(expected)}`, {
          line: quote(line),
        }),
      );
    }
    const checked = schema.safeParse(value);
    if (!checked.success) {
      const issue = checked.error.issues[0];
      const where = issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
      throw await this.fail(
        new AgentError('protocol', this.label, `sent a malformed ${expected} message (${where}${issue.message})`, { line: quote(line) }),
      );
    }
    return checked.data;
  }

  /** Records the agent as failed and kills it: after any fault it is out of step with the host. */
  async fail(error: AgentError): Promise<AgentError> {
    this.failure ??= error;
    this.killGroup();
    await this.gone(KILL_WAIT_MS);
    return error;
  }

  /** Sends close, lets the agent exit within `graceMs`, then kills its process group. */
  stop(graceMs: number): Promise<void> {
    this.stopping ??= this.stopNow(graceMs);
    return this.stopping;
  }

  private async stopNow(graceMs: number): Promise<void> {
    if (!this.ended && !this.failure) this.send({ type: 'close' });
    this.child.stdin.end();
    await waitAtMost(this.exited, graceMs);
    // Also after a clean exit: a grandchild the agent left running is ended with its group.
    this.killGroup();
    await this.gone(KILL_WAIT_MS);
    this.child.stdout.destroy();
    this.child.stderr.destroy();
  }

  /**
   * Waits (at most `ms`) until the process has exited and its whole group is gone. A grandchild
   * killed with the group lingers until init reaps it, so the group is polled.
   */
  private async gone(ms: number): Promise<void> {
    const deadline = Date.now() + ms;
    await waitAtMost(this.exited, ms);
    while (this.groupExists() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, GROUP_POLL_MS));
  }

  private groupExists(): boolean {
    if (this.child.pid === undefined) return false;
    try {
      process.kill(-this.child.pid, 0);
      return true;
    } catch {
      return false;
    }
  }

  killGroup(): void {
    if (this.child.pid === undefined) return;
    try {
      process.kill(-this.child.pid, 'SIGKILL');
    } catch {
      // ESRCH: the group is already gone.
    }
  }

  private send(message: HostMessage): void {
    if (this.child.stdin.writable) this.child.stdin.write(`${JSON.stringify(message)}\n`);
  }

  private nextLine(awaited: string, timeoutMs: number): Promise<string> {
    const line = this.lines.shift();
    if (line !== undefined) return Promise.resolve(line);
    if (this.ended) return Promise.reject(this.crashError(awaited));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending = null;
        reject(new AgentError('timeout', this.label, `did not send ${awaited} within ${timeoutMs} ms`, { stderr: this.lastStderrLines() }));
      }, timeoutMs);
      this.pending = { awaited, waiter: { resolve, reject, timer } };
    });
  }

  private onStdout(chunk: string): void {
    this.partialLine += chunk;
    let newline: number;
    while ((newline = this.partialLine.indexOf('\n')) >= 0) {
      const line = this.partialLine.slice(0, newline).replace(/\r$/, '');
      this.partialLine = this.partialLine.slice(newline + 1);
      // Blank lines carry nothing; agents that print an empty line by accident are not faulted.
      if (line.trim() !== '') this.lines.push(line);
    }
    if (this.partialLine.length > MAX_LINE_CHARS) {
      // Handed on as a line: it cannot parse, so the exchange reports it as garbage.
      this.lines.push(this.partialLine);
      this.partialLine = '';
    }
    this.deliver();
  }

  private deliver(): void {
    if (!this.pending || this.lines.length === 0) return;
    const { waiter } = this.pending;
    this.pending = null;
    clearTimeout(waiter.timer);
    waiter.resolve(this.lines.shift()!);
  }

  private onEnd(exitCode: number | null, signal: string | null, why?: string): void {
    this.ended ??= { exitCode, signal, why };
    if (!this.pending) return;
    const { awaited, waiter } = this.pending;
    this.pending = null;
    clearTimeout(waiter.timer);
    waiter.reject(this.crashError(awaited));
  }

  private crashError(awaited: string): AgentError {
    const { exitCode, signal, why } = this.ended!;
    const how = why ?? (signal ? `was killed by signal ${signal}` : `exited with code ${exitCode}`);
    return new AgentError('crashed', this.label, `${how} before sending ${awaited}`, { exitCode, signal, stderr: this.lastStderrLines() });
  }

  private lastStderrLines(): string {
    return this.stderrTail.trimEnd().split('\n').slice(-STDERR_TAIL_LINES).join('\n');
  }
}

/**
 * The script /bin/sh runs for `command`. A single simple command is prefixed with `exec` (as bash
 * does by itself, and dash does not) so that the agent replaces the shell: it is then our direct
 * child, reaped by us the moment it dies, instead of an orphan left for init to reap when the
 * shell is killed first. Anything else (pipes, lists, leading assignments, keywords) runs as written.
 */
export function shellScript(command: string): string {
  return isSimpleCommand(command) ? `exec ${command}` : command;
}

const SHELL_KEYWORDS = /^\s*(?:if|then|else|elif|fi|do|done|case|esac|while|until|for|in|function|select|exec|[{}!]|\[\[)(?:\s|$)/;
const LEADING_ASSIGNMENT = /^\s*[A-Za-z_][A-Za-z0-9_]*=/;
/** Outside quotes, these make a command a list, a pipeline, a subshell or a substitution. */
const CONTROL_CHARACTERS = new Set([';', '&', '|', '(', ')', '`', '\n']);

function isSimpleCommand(command: string): boolean {
  if (command.trim() === '' || SHELL_KEYWORDS.test(command) || LEADING_ASSIGNMENT.test(command)) return false;
  let quote: "'" | '"' | null = null;
  for (let i = 0; i < command.length; i++) {
    const c = command[i];
    if (quote === "'") {
      if (c === "'") quote = null;
    } else if (c === '\\') {
      i++;
    } else if (quote === '"') {
      if (c === '"') quote = null;
      else if (c === '`' || (c === '$' && command[i + 1] === '(')) return false;
    } else if (c === "'" || c === '"') {
      quote = c;
    } else if (CONTROL_CHARACTERS.has(c)) {
      return false;
    }
  }
  return quote === null;
}

function parseObject(line: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** Resolves when `promise` does or after `ms`, whichever is first; never rejects. */
async function waitAtMost(promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}
