/**
 * Agents' actions as the game's: a leader agent's action (a code or `{instruction}`) and a
 * follower's code become the engine's PlayerAction, an instruction's text sanitized as the game
 * server does. Hosts check them with the protocol's readers first (protocol.ts; every seat an
 * agent plays is read so in seatAdapter.ts); these throw a RangeError on anything else.
 */
import { actionOfCode, FOLLOWER_CODES, isFollowerCode, sanitizeInstruction, type PlayerAction } from '../engine/actions';
import { LEADER_AGENT_CODES, type AgentAction, type LeaderAgentAction, type LeaderAgentCode } from './types';

export function isLeaderAgentCode(value: unknown): value is LeaderAgentCode {
  return typeof value === 'string' && (LEADER_AGENT_CODES as readonly string[]).includes(value);
}

export function leaderPlayerAction(action: LeaderAgentAction): PlayerAction {
  if (typeof action === 'object' && action !== null && typeof action.instruction === 'string') {
    return { type: 'instruction', text: sanitizeInstruction(action.instruction) };
  }
  if (!isLeaderAgentCode(action)) {
    throw new RangeError(`unknown leader action ${JSON.stringify(action)}; use one of ${LEADER_AGENT_CODES.join(', ')} or { instruction: text }`);
  }
  return actionOfCode(action);
}

export function followerPlayerAction(action: AgentAction): PlayerAction {
  if (!isFollowerCode(action)) throw new RangeError(`unknown follower action ${JSON.stringify(action)}; use one of ${FOLLOWER_CODES.join(', ')}`);
  return actionOfCode(action);
}
