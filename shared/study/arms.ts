/**
 * A study's arms: the agents that play the seat its participants do not, one drawn for each game
 * (server/study/arms.ts draws it), so that people's games with different agents can be compared.
 * This module holds the arms' part of the study file and the checks across fields that need no
 * agent code; which agents exist and what an LLM arm's settings may be is checked where the
 * agents are (server/study/armAgents.ts, through parseStudy's `checkArm`).
 */
import { z } from 'zod';
import type { Role } from '../engine/state';

/** An arm's id: it names the arm in logs, reports and the admin page. */
const armIdSchema = z
  .string()
  .min(1, 'must not be empty')
  .max(40, 'must be at most 40 characters')
  .regex(/^[A-Za-z0-9][A-Za-z0-9_-]*$/, 'must be letters, digits, _ and - (starting with a letter or digit), as in llm-a');

/** The LLM agent's spec (docs/llm.md): its settings are the arm's `llm`. */
export const LLM_ARM_AGENT = 'llm';

/** Weights are whole numbers, so that a block of the draw holds each arm a whole number of times. */
export const MAX_ARM_WEIGHT = 100;

export const armSchema = z.strictObject({
  id: armIdSchema,
  /** An agent spec as docs/agents.md has them: a built-in agent's name, `llm`, or a program's command line. */
  agent: z.string().trim().min(1, 'must not be empty').max(1000, 'must be at most 1000 characters'),
  /** The LLM agent's settings, with the keys of its config file (docs/llm.md): only for `agent: llm`. */
  llm: z.record(z.string(), z.unknown()).optional(),
  /** The arm's share of the games is its weight over the sum of the weights. */
  weight: z
    .number()
    .int('must be a whole number: an arm with weight 2 gets twice the games of one with weight 1')
    .min(1, 'must be positive (1 or more): an arm with no games is no arm; leave it out instead')
    .max(MAX_ARM_WEIGHT, `must be at most ${MAX_ARM_WEIGHT}`)
    .default(1),
});
export type Arm = z.output<typeof armSchema>;

export const armsSchema = z
  .array(armSchema)
  .min(1, 'must list at least one arm (or leave arms out: the participants then play each other)')
  .max(20, 'must list at most 20 arms')
  .superRefine((arms, ctx) => {
    arms.forEach((arm, i) => {
      const first = arms.findIndex((other) => other.id === arm.id);
      if (first < i) ctx.addIssue({ code: 'custom', path: [i, 'id'], message: `${JSON.stringify(arm.id)} is already the id of arm ${first}: each arm needs an id of its own` });
      if (arm.agent === LLM_ARM_AGENT && arm.llm === undefined) {
        ctx.addIssue({ code: 'custom', path: [i, 'llm'], message: 'is required for agent llm: its settings, at least {model: ...} (docs/llm.md)' });
      }
      if (arm.agent !== LLM_ARM_AGENT && arm.llm !== undefined) {
        ctx.addIssue({ code: 'custom', path: [i, 'llm'], message: `is for agent llm only; this arm's agent is ${JSON.stringify(arm.agent)}` });
      }
      for (const key of Object.keys(arm.llm ?? {})) {
        // A study file is copied and shared: a key written in it would leak with it.
        if (/api.?key$/i.test(key)) ctx.addIssue({ code: 'custom', path: [i, 'llm', key], message: 'the API key itself never goes in a study file: name the environment variable that holds it with api-key-env' });
      }
    });
  });

/** The role settings a study with arms needs: its participants keep one role, and the arms play the other. */
export interface ArmRoles {
  readonly newWorkersStartAs: 'follower' | 'leader' | 'either';
  readonly promotion: unknown;
}

/** Why a study's role settings cannot go with arms, as [field path, message], or null when they can. */
export function armRolesProblem(roles: ArmRoles): [string[], string] | null {
  if (roles.newWorkersStartAs === 'either') {
    return [['roles', 'newWorkersStartAs'], 'must be follower or leader in a study with arms: the participants play that role and the arms\' agents the other'];
  }
  if (roles.promotion !== 'manual') {
    return [['roles', 'promotion'], 'must be manual in a study with arms: a promotion would change a participant\'s role, and the arms play one seat'];
  }
  return null;
}

/** The seat the arms' agents play: the one the study's participants do not. */
export function armSeat(study: { readonly roles: Pick<ArmRoles, 'newWorkersStartAs'> }): Role {
  return study.roles.newWorkersStartAs === 'leader' ? 'follower' : 'leader';
}

/** A problem with one arm's agent, found by the agents' own checks: its field path under the arm, and what is wrong. */
export interface ArmProblem {
  readonly path: readonly (string | number)[];
  readonly message: string;
}

/** Checks an arm's agent for the seat it plays (parseStudy's `checkArm`). */
export type CheckArm = (arm: Arm, seat: Role) => readonly ArmProblem[];

/**
 * What a game's log header records of its arm (`meta.arm`): the arm, the agent spec and, for an
 * LLM arm, its settings as the study file gives them. The file never holds a key (only the name
 * of the variable that does), so nothing here is secret.
 */
export interface ArmMeta {
  readonly id: string;
  readonly agent: string;
  readonly weight: number;
  /** Which draw of the study this game's arm was (0 the first): the draw is a function of it. */
  readonly draw: number;
  readonly llm?: Readonly<Record<string, unknown>>;
}

export function armMeta(arm: Arm, draw: number): ArmMeta {
  return { id: arm.id, agent: arm.agent, weight: arm.weight, draw, ...(arm.llm && { llm: { ...arm.llm } }) };
}
