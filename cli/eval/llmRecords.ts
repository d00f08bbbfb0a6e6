/**
 * An LLM seat's figures for a report, read from its call records rather than from the agent's
 * memory: the same numbers whether the run went through at once or was resumed, and numbers a
 * reader can recompute from the files the report links. The settings are the records' header's
 * (model, endpoint, template, sampling and limits; the key's variable only).
 */
import { existsSync } from 'node:fs';
import { countCall, NO_CALLS, readRecords, type CallRecord } from '../../shared/agents/node/llm/records';
import type { LlmCounts, LlmSeatSettings } from '../../shared/eval/llmSummary';

/** The counts and settings of the record files that exist among `files` (a game the seat never acted in may have none). */
export function readLlmSeat(files: readonly string[]): { readonly counts: LlmCounts; readonly settings: LlmSeatSettings | null } {
  const calls: CallRecord[] = [];
  let settings: LlmSeatSettings | null = null;
  for (const file of files) {
    if (!existsSync(file)) continue;
    for (const line of readRecords(file)) {
      if (line.kind === 'llm-call') calls.push(line);
      else settings ??= { model: line.model, baseUrl: line.baseUrl, template: line.template, settings: line.settings };
    }
  }
  return { counts: calls.reduce(countCall, NO_CALLS), settings };
}
