/** `cerealbar llm reparse FILE...`: today's reply parser over recorded replies, and what it would change. */
import type { Command } from 'commander';
import { isDeepStrictEqual } from 'node:util';
import { readRecords, type CallRecord } from '../../shared/agents/node/llm/records';
import { parseReply, type ParsedReply } from '../../shared/agents/node/llm/reply';
import { CliError } from '../errors';
import { integerOption } from '../options';

export interface ReparseDifference {
  readonly call: number;
  readonly observation: number;
  readonly event: number | null;
  readonly recorded: { readonly status: string; readonly actions: unknown };
  readonly now: { readonly status: string; readonly actions: unknown };
}

export interface ReparseSummary {
  readonly file: string;
  /** Calls with a reply (backend errors, timeouts and budget lines have none to parse). */
  readonly calls: number;
  readonly withoutReply: number;
  readonly same: number;
  readonly changed: number;
  readonly differences: readonly ReparseDifference[];
}

/** Each recorded reply parsed again against what it was checked against then. */
export function reparseFile(file: string): ReparseSummary {
  let lines;
  try {
    lines = readRecords(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new CliError(code === 'ENOENT' ? `${file}: cannot read: no such file` : (error as Error).message);
  }
  const calls = lines.filter((line): line is CallRecord => line.kind === 'llm-call');
  const differences: ReparseDifference[] = [];
  let replies = 0;
  for (const call of calls) {
    if (call.reply === null) continue;
    replies++;
    const now = parseReply(call.reply, call.check);
    const nowActions = actionsOf(now);
    if (now.status !== call.status || !isDeepStrictEqual(nowActions, call.actions)) {
      differences.push({
        call: call.call,
        observation: call.observation,
        event: call.event,
        recorded: { status: call.status, actions: call.actions },
        now: { status: now.status, actions: nowActions },
      });
    }
  }
  return { file, calls: replies, withoutReply: calls.length - replies, same: replies - differences.length, changed: differences.length, differences };
}

function actionsOf(parsed: ParsedReply): unknown {
  return parsed.status === 'format_error' ? null : parsed.actions;
}

function describe(summary: ReparseSummary, shown: number): string[] {
  const without = summary.withoutReply > 0 ? ` (and ${summary.withoutReply} without a reply)` : '';
  const lines = [`${summary.file}: ${summary.calls} calls${without}, ${summary.same} same, ${summary.changed} changed`];
  for (const d of summary.differences.slice(0, shown)) {
    const at = d.event === null ? `observation ${d.observation}` : `observation ${d.observation}, event ${d.event}`;
    lines.push(`  call ${d.call} (${at}): ${d.recorded.status} ${JSON.stringify(d.recorded.actions)} -> ${d.now.status} ${JSON.stringify(d.now.actions)}`);
  }
  if (summary.differences.length > shown) lines.push(`  ... and ${summary.differences.length - shown} more`);
  return lines;
}

export function registerLlmCommands(program: Command): void {
  const llm = program.command('llm').description("the LLM agent's call records");
  llm
    .command('reparse')
    .description("parse the replies in call records (*.llm.ndjson, or *.llm.jsonl of older runs) again with today's parser and say what would change")
    .argument('<files...>', 'call record files')
    .option('--show <n>', 'differences listed per file', integerOption('--show', 0, 1_000_000), 5)
    .option('--json', 'print one JSON summary per file instead')
    .action((files: string[], options: { show: number; json?: boolean }) => {
      const summaries = files.map(reparseFile);
      for (const summary of summaries) {
        const text = options.json ? JSON.stringify(summary) : describe(summary, options.show).join('\n');
        process.stdout.write(`${text}\n`);
      }
    });
}
