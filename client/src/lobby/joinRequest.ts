/**
 * What a player asks the matchmaker for. The pool and crowdsourcing ids come from the page's URL
 * (a study's link: ?pool=expert&workerId=...&assignmentId=...&hitId=...) and go to the server as
 * they are, checked with the server's own schema first so a bad link is reported before joining.
 */
import { joinOptionsSchema, playerSeatAsked, type JoinOptions } from '../../../shared/protocol/messages';

export type RoleChoice = JoinOptions['role'];

export interface LinkParameters {
  readonly pool?: string;
  readonly workerId?: string;
  readonly assignmentId?: string;
  readonly hitId?: string;
  readonly role?: RoleChoice;
  /** A private game's code, from a link shared by the player who created it. */
  readonly code?: string;
}

const LINK_KEYS = ['pool', 'workerId', 'assignmentId', 'hitId', 'role', 'code'] as const;

export function readLink(search: string): { parameters: LinkParameters; problem: string | null } {
  const query = new URLSearchParams(search);
  const raw: Record<string, string> = {};
  for (const key of LINK_KEYS) {
    const value = query.get(key);
    if (value !== null && value !== '') raw[key] = value;
  }
  const checked = joinOptionsSchema.safeParse(raw);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    return { parameters: {}, problem: `The link has a bad ${issue.path.join('.')}: ${issue.message}.` };
  }
  return { parameters: raw as LinkParameters, problem: null };
}

/** The join options for one way of playing, keeping the link's pool and ids. */
export function joinOptions(
  link: LinkParameters,
  choice: { role: RoleChoice; code?: string; private?: boolean; botFollower?: boolean; botLeader?: boolean },
): Partial<JoinOptions> {
  const { pool, workerId, assignmentId, hitId } = link;
  return {
    // The server's agent takes the other seat: asking for one chooses the player's own.
    role: playerSeatAsked({ role: choice.role, botFollower: choice.botFollower ?? false, botLeader: choice.botLeader ?? false }),
    ...(pool && { pool }),
    ...(workerId && { workerId }),
    ...(assignmentId && { assignmentId }),
    ...(hitId && { hitId }),
    ...(choice.code && { code: choice.code }),
    ...(choice.private && { private: true }),
    ...(choice.botFollower && { botFollower: true }),
    ...(choice.botLeader && { botLeader: true }),
  };
}

/** The problem with a typed code, in words, or null; the server's schema decides. */
export function codeProblem(code: string): string | null {
  const checked = joinOptionsSchema.shape.code.safeParse(code);
  return checked.success ? null : `That is not a game code: ${checked.error.issues[0].message}.`;
}
