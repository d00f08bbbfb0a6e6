/**
 * The reply parser: a model's text to a plan of agent actions, or a message saying what is wrong,
 * written for the model (it is sent back to it once). Pure, so that `cerealbar llm reparse` can run
 * today's parser over recorded replies.
 *
 * The reply is a JSON object, alone or inside the first fenced block (```json ... ```):
 *   {"thought": "optional reasoning", "actions": ["MF", "RL", "DONE"]}
 * a leader's actions being its moves, "END" and {"instruction": "..."}. Codes are read in any
 * case; keys besides `actions` and `thought` are ignored. An empty list is no plan (`empty_plan`):
 * the agent asks again, as for any reply it cannot play.
 */
import { FOLLOWER_CODES, instructionLength, sanitizeInstruction } from '../../../engine/actions';
import { LEADER_AGENT_CODES, type AgentAction, type LeaderAgentAction } from '../../types';

export type ReplyAction = AgentAction | LeaderAgentAction;

/** What the parser checks a plan against: the role's vocabulary and what is allowed at the moment. */
export type ReplyCheck =
  | { readonly role: 'follower'; readonly legal: readonly string[] }
  | { readonly role: 'leader'; readonly legal: readonly string[]; readonly canInstruct: boolean; readonly maxInstructionLength: number };

export type ParsedReply =
  | { readonly status: 'ok'; readonly actions: ReplyAction[]; readonly thought?: string }
  | { readonly status: 'format_error'; readonly message: string }
  | { readonly status: 'illegal'; readonly message: string; readonly actions: ReplyAction[]; readonly thought?: string }
  | { readonly status: 'empty_plan'; readonly message: string; readonly actions: []; readonly thought?: string };

/** The first fenced block's content (its language tag dropped), else the whole reply. */
export function jsonText(reply: string): string {
  const fenced = /```[A-Za-z0-9_-]*[ \t]*\r?\n([\s\S]*?)```/.exec(reply);
  return (fenced ? fenced[1] : reply).trim();
}

export function parseReply(reply: string, check: ReplyCheck): ParsedReply {
  const text = jsonText(reply);
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    return formatError(`it is not JSON (${(error as Error).message})`);
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return formatError('it is not a JSON object');
  const { actions: raw, thought } = data as { actions?: unknown; thought?: unknown };
  if (!Array.isArray(raw)) return formatError('it has no "actions" list');
  if (thought !== undefined && typeof thought !== 'string') return formatError('"thought" must be a string');
  const actions: ReplyAction[] = [];
  for (const [index, item] of raw.entries()) {
    const action = readAction(item, check.role);
    if (typeof action === 'object' && 'error' in action) return formatError(`actions[${index}] ${action.error}`);
    actions.push(action);
  }
  const withThought = thought === undefined ? {} : { thought };
  if (actions.length === 0) return { status: 'empty_plan', message: `the plan is empty: give at least one action; ${allowedNow(check)}`, actions: [], ...withThought };
  const illegal = illegality(actions, check);
  return illegal ? { status: 'illegal', message: illegal, actions, ...withThought } : { status: 'ok', actions, ...withThought };
}

function formatError(why: string): ParsedReply {
  return { status: 'format_error', message: `the reply is not a usable JSON object: ${why}` };
}

function readAction(item: unknown, role: ReplyCheck['role']): ReplyAction | { error: string } {
  const codes: readonly string[] = role === 'follower' ? FOLLOWER_CODES : LEADER_AGENT_CODES;
  if (typeof item === 'string') {
    const code = item.trim().toUpperCase();
    if (codes.includes(code)) return code as ReplyAction;
  } else if (role === 'leader' && item !== null && typeof item === 'object' && !Array.isArray(item)) {
    const keys = Object.keys(item);
    const text = (item as { instruction?: unknown }).instruction;
    if (keys.length === 1 && typeof text === 'string') return { instruction: text };
  }
  const vocabulary = role === 'follower' ? codes.join(', ') : `${codes.join(', ')} or {"instruction": "..."}`;
  return { error: `is ${JSON.stringify(item)}: not one of ${vocabulary}` };
}

/** What may be played now, in the words the messages use. */
function allowedNow(check: ReplyCheck): string {
  const allowed = [...check.legal, ...(check.role === 'leader' && check.canInstruct ? ['{"instruction": "..."}'] : [])];
  return `allowed now: ${allowed.length > 0 ? allowed.join(', ') : 'nothing'}`;
}

/**
 * Why a plan, not empty, cannot be played now (its first action is not allowed, an instruction's
 * text is empty or too long), or null. The agent also asks it of a plan's action the game did not
 * play, to say whether the game refused it.
 */
export function illegality(actions: readonly ReplyAction[], check: ReplyCheck): string | null {
  if (check.role === 'leader') {
    for (const [index, action] of actions.entries()) {
      if (typeof action !== 'object') continue;
      const length = instructionLength(sanitizeInstruction(action.instruction));
      if (length === 0) return `actions[${index}]: an instruction's text must not be empty`;
      if (length > check.maxInstructionLength) return `actions[${index}]: the instruction has ${length} characters, more than the ${check.maxInstructionLength} allowed`;
    }
    const first = actions[0];
    if (typeof first === 'object') return check.canInstruct ? null : `an instruction cannot be written now; ${allowedNow(check)}`;
  }
  const first = actions[0] as string;
  return check.legal.includes(first) ? null : `${first} is not allowed now; ${allowedNow(check)}`;
}
