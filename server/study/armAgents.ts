/**
 * A study's arms' agents: the checks of an arm's agent when the study file is loaded (the agents'
 * names and seats, the LLM arm's settings), and the agent started for each game of the arm, as
 * the room's agent partner (botSeat.ts) plays it.
 */
import { existsSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { LLM_CONFIG_KEYS, partialLlmConfigSchema, pricesProblem, resolveLlmConfig, type LlmConfig, type PartialLlmConfig } from '../../shared/agents/node/llm/config';
import { startLlmFollower, startLlmLeader } from '../../shared/agents/node/llm/seats';
import { LLM_AGENT, seatProblem, unknownNameProblem } from '../../shared/agents/catalogue';
import type { Role } from '../../shared/engine/state';
import { loadRecording } from '../../shared/eval/recording';
import { type Arm, type ArmProblem, type CheckArm } from '../../shared/study/arms';
import type { SeatedAgent } from '../rooms/botSeat';
import { startSeatAgent } from '../rooms/seatAgents';

/** The config keys by their name in a file (`base-url` → baseUrl). */
const KEY_OF_FILE_KEY = new Map<string, keyof LlmConfig>(Object.entries(LLM_CONFIG_KEYS).map(([key, fileKey]) => [fileKey, key as keyof LlmConfig]));

/** An LLM arm's settings as the agent's configuration takes them (keys renamed), and the problems of the keys no configuration has. */
function llmSettings(llm: Readonly<Record<string, unknown>>): { renamed: Record<string, unknown>; problems: ArmProblem[] } {
  const renamed: Record<string, unknown> = {};
  const problems: ArmProblem[] = [];
  for (const [fileKey, value] of Object.entries(llm)) {
    const key = KEY_OF_FILE_KEY.get(fileKey);
    if (key) renamed[key] = value;
    else problems.push({ path: ['llm', fileKey], message: `is not a setting of the LLM agent (its settings: ${[...KEY_OF_FILE_KEY.keys()].join(', ')})` });
  }
  return { renamed, problems };
}

/** What is wrong with an LLM arm's settings: unknown keys, bad values, no model, one price without the other, a prompt that is not there. */
function llmProblems(llm: Readonly<Record<string, unknown>>, studyDir: string): ArmProblem[] {
  const { renamed, problems } = llmSettings(llm);
  const parsed = partialLlmConfigSchema.safeParse(renamed);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      problems.push({ path: ['llm', LLM_CONFIG_KEYS[issue.path[0] as keyof LlmConfig] ?? String(issue.path[0])], message: issue.message });
    }
    return problems;
  }
  if (parsed.data.model === undefined) problems.push({ path: ['llm'], message: 'needs model: the model to ask (docs/llm.md)' });
  const prices = pricesProblem(parsed.data);
  if (prices) problems.push({ path: ['llm'], message: prices });
  const prompt = parsed.data.prompt;
  if (prompt !== undefined && !existsSync(resolve(studyDir, prompt))) problems.push({ path: ['llm', 'prompt'], message: `${prompt}: no such file (a prompt template, relative to the study file)` });
  return problems;
}

/**
 * The checks of an arm's agent for its seat, for a study file in `studyDir`: a built-in agent of
 * the other seat, a bare word that names no agent (a program is a command line: `python3
 * agent.py`, `./agent`), and an LLM arm's settings. A program that does not start, and agents
 * that cannot play a live seat (the oracles), are found when the server starts each arm's agent.
 */
export function armChecker(studyDir: string): CheckArm {
  return (arm, seat) => {
    if (arm.agent === LLM_AGENT) return llmProblems(arm.llm ?? {}, studyDir);
    const wrongSeat = seatProblem(arm.agent, seat, 'live');
    if (wrongSeat) return [{ path: ['agent'], message: `${wrongSeat}: the arms play the ${seat}'s seat (the participants are ${seat === 'leader' ? 'followers' : 'leaders'})` }];
    const unknown = unknownNameProblem(arm.agent, seat, 'live');
    return unknown ? [{ path: ['agent'], message: unknown }] : [];
  };
}

/** An LLM arm's prompt and few-shot logs, relative to the study file, made absolute: the server may run from anywhere. */
export function withStudyPaths(arm: Arm, studyDir: string): Arm {
  if (!arm.llm) return arm;
  const absolute = (path: unknown) => (typeof path === 'string' && !isAbsolute(path) ? resolve(studyDir, path) : path);
  const { prompt, 'few-shot-logs': fewShotLogs } = arm.llm;
  return {
    ...arm,
    llm: {
      ...arm.llm,
      ...(prompt !== undefined && { prompt: absolute(prompt) }),
      ...(fewShotLogs !== undefined && { 'few-shot-logs': Array.isArray(fewShotLogs) ? fewShotLogs.map(absolute) : absolute(fewShotLogs) }),
    },
  };
}

/** The configuration of an LLM arm (its settings checked when the study was loaded). */
export function armLlmConfig(arm: Arm): LlmConfig {
  return resolveLlmConfig(partialLlmConfigSchema.parse(llmSettings(arm.llm ?? {}).renamed) as PartialLlmConfig);
}

/** Starts an arm's agent for one game's seat; an LLM arm's call records go to `recordDir`, one file per game. */
export async function startArmAgent(arm: Arm, seat: Role, recordDir: string): Promise<SeatedAgent> {
  // An arm's follower may carry worked examples from logged games (few-shot-logs, relative to the study file).
  const llmOptions = () => ({ config: armLlmConfig(arm), recordDir, fewShot: { readGame: loadRecording } });
  return startSeatAgent(seat, arm.agent, (role) => (role === 'leader' ? startLlmLeader(llmOptions()) : startLlmFollower(llmOptions())));
}
