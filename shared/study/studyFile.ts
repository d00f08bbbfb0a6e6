/**
 * The study file: one crowdsourced (or lab) study, as the person running it writes it, in YAML or
 * JSON. This module holds its schema and the checks across fields; `parseStudy.ts` reads the text
 * and loads the Markdown it names. Pure: no file access, so a browser page can use the types.
 *
 * Every object is strict (an unknown field is an error, so a misspelt field is never silently
 * ignored) and every optional field has a documented default (docs/running-a-study.md).
 */
import { z } from 'zod';
import { profileConfig, RULES_PROFILES, type GameConfig, type RulesProfile } from '../engine/config';
import { DEFAULT_POOL, poolNameSchema } from '../protocol/messages';
import { armRolesProblem, armsSchema } from './arms';

// ---------------------------------------------------------------------------------------------
// Small pieces

/** A study id: it names the study in URLs (/study/<id>) and is the default matchmaking pool. */
export const STUDY_ID_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
export const MAX_STUDY_ID_LENGTH = 50;

export const studyIdSchema = z
  .string()
  .max(MAX_STUDY_ID_LENGTH, `must be at most ${MAX_STUDY_ID_LENGTH} characters`)
  .regex(STUDY_ID_PATTERN, 'must be lowercase letters, digits and single dashes inside, as in "pilot-2"');

/** Text shown to participants: not empty once trimmed. */
const text = (max: number) =>
  z
    .string()
    .trim()
    .min(1, 'must not be empty')
    .max(max, `must be at most ${max} characters`);

/** A Markdown file next to the study file (or below or above it), named relative to it. */
const markdownPath = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .refine((path) => !/^([/\\]|[A-Za-z]:[/\\])/.test(path), 'must be a path relative to the study file, not an absolute one')
  .refine((path) => /\.(md|markdown)$/i.test(path), 'must name a Markdown file (ending in .md or .markdown)');

/** An amount of money in the study's currency (units, not cents): finite, ≥ 0, at most 2 decimals. */
const money = (max: number) =>
  z
    .number()
    .min(0, 'must not be negative')
    .max(max, `must be at most ${max} (amounts are in units of the currency, not cents)`)
    .refine((n) => Math.abs(Math.round(n * 100) - n * 100) < 1e-6, 'must have at most 2 decimal places');

/** ISO 4217 codes the JavaScript runtime knows (every current currency); three capitals at least. */
function isCurrencyCode(code: string): boolean {
  const supported = (Intl as { supportedValuesOf?: (key: string) => string[] }).supportedValuesOf?.('currency');
  return supported === undefined || supported.includes(code);
}

const currencySchema = z
  .string()
  .regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code of three capital letters, as in GBP, USD or EUR')
  .refine(isCurrencyCode, { error: (issue) => `${JSON.stringify(issue.input)} is not an ISO 4217 currency code` });

/** A completion code: it goes into the platform's completion URL, so URL-safe characters only. */
const completionCode = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(64, 'must be at most 64 characters')
  .regex(/^[A-Za-z0-9_-]+$/, 'must be letters, digits, _ and - only, as in C1A2B3C4');

// ---------------------------------------------------------------------------------------------
// Sections

export const paySchema = z.strictObject({
  /** The fixed payment for taking part (Prolific's reward; the HIT's reward on MTurk). */
  base: money(1000),
  /** Bonus for each point (each valid set) the participant's games score. */
  bonusPerPoint: z.number().min(0, 'must not be negative').max(100, 'must be at most 100 (amounts are in units of the currency, not cents)').default(0),
  /** The most bonus one participant can earn in the study; no cap when left out. */
  maxBonus: money(1000).optional(),
  /** ISO 4217, e.g. GBP or USD. */
  currency: currencySchema,
});

export const timeSchema = z
  .strictObject({
    /** How long a participant waits for a partner before leaving with the noPartner code. */
    waitForPartnerSeconds: z.number().int('must be a whole number of seconds').min(10, 'must be at least 10').max(3600, 'must be at most 3600').default(300),
    /**
     * How long a session takes at most, as participants are told; MTurk's assignment lasts this
     * plus 5 minutes. The server does not cut a session short: the wait for a partner and the
     * turn clocks bound it.
     */
    sessionMinutes: z.number().int('must be a whole number of minutes').min(1, 'must be at least 1').max(600, 'must be at most 600').default(30),
    /** Seconds in a leader's / follower's turn in this study's games; `serve`'s values when left out. */
    leaderTurnSeconds: z.number().int('must be a whole number of seconds').min(1, 'must be at least 1').max(3600, 'must be at most 3600').optional(),
    followerTurnSeconds: z.number().int('must be a whole number of seconds').min(1, 'must be at least 1').max(3600, 'must be at most 3600').optional(),
  })
  .superRefine((time, ctx) => {
    if (time.waitForPartnerSeconds > time.sessionMinutes * 60) {
      ctx.addIssue({
        code: 'custom',
        path: ['waitForPartnerSeconds'],
        message: `${time.waitForPartnerSeconds} s is longer than the whole session (sessionMinutes: ${time.sessionMinutes})`,
      });
    }
  });

export const MIN_CHOICES = 2;
export const MAX_CHOICES = 6;

export const quizQuestionSchema = z
  .strictObject({
    prompt: text(1000),
    choices: z
      .array(text(300))
      .min(MIN_CHOICES, `must list at least ${MIN_CHOICES} choices`)
      .max(MAX_CHOICES, `must list at most ${MAX_CHOICES} choices`),
    /** The right choice, counted from 0 (0 is the first choice). */
    answer: z.number().int('must be a whole number: the right choice counted from 0').min(0, 'must not be negative: the right choice counted from 0'),
    /** Why the answer is right, for the researcher's records; participants never see it (it could give an answer away). */
    explanation: text(1000).optional(),
  })
  .superRefine((question, ctx) => {
    const n = question.choices.length;
    if (question.answer >= n) {
      ctx.addIssue({
        code: 'custom',
        path: ['answer'],
        message: `${question.answer} is not one of the ${n} choices: answers count from 0, so 0 to ${n - 1}`,
      });
    }
    question.choices.forEach((choice, i) => {
      const first = question.choices.findIndex((other) => other.toLowerCase() === choice.toLowerCase());
      if (first < i) ctx.addIssue({ code: 'custom', path: ['choices', i], message: `is the same as choice ${first}` });
    });
  });

export const quizSchema = z
  .strictObject({
    questions: z.array(quizQuestionSchema).min(1, 'must have at least one question').max(30, 'must have at most 30 questions'),
    /** Right answers needed in one attempt to pass: a count, from 1 to the number of questions; all of them when left out. */
    passMark: z.number().int('must be a whole number: how many right answers pass').min(1, 'must be at least 1').optional(),
    /** Attempts at the whole quiz; a participant who fails them all is screened out. */
    attempts: z.number().int('must be a whole number').min(1, 'must be at least 1').max(10, 'must be at most 10').default(2),
  })
  .superRefine((quiz, ctx) => {
    if (quiz.passMark !== undefined && quiz.passMark > quiz.questions.length) {
      ctx.addIssue({
        code: 'custom',
        path: ['passMark'],
        message: `${quiz.passMark} right answers are needed but the quiz has only ${quiz.questions.length} question(s)`,
      });
    }
  })
  .transform((quiz) => ({ ...quiz, passMark: quiz.passMark ?? quiz.questions.length }));

export const promotionRuleSchema = z.strictObject({
  /** Completed games as follower before a promotion is considered. */
  afterGames: z.number().int('must be a whole number of games').min(1, 'must be at least 1').max(1000, 'must be at most 1000'),
  /** The mean score of those games must be at least this. */
  minMeanScore: z.number().min(0, 'must not be negative').max(1000, 'must be at most 1000'),
});

export const START_ROLES = ['follower', 'leader', 'either'] as const;

export const rolesSchema = z
  .strictObject({
    /**
     * The role a participant new to the study may play. 'either' pairs any two new participants
     * (one leads); 'follower' is the protocol of new followers with experienced leaders, whose
     * first leaders the researcher promotes (shared/study/roles.ts says what each setting means).
     */
    newWorkersStartAs: z.enum(START_ROLES).default('either'),
    /** How a follower becomes a leader: 'manual' (on the admin page) or a rule. */
    promotion: z.union([z.literal('manual'), promotionRuleSchema], { error: 'must be manual, or {afterGames, minMeanScore}' }).default('manual'),
  })
  .superRefine((roles, ctx) => {
    if (roles.promotion !== 'manual' && roles.newWorkersStartAs !== 'follower') {
      ctx.addIssue({
        code: 'custom',
        path: ['promotion'],
        message: `a promotion rule needs newWorkersStartAs: follower (new participants already start as ${roles.newWorkersStartAs}); write promotion: manual`,
      });
    }
  });

/** Why a participant's session ended: each ending has its own completion code. */
export const COMPLETION_OUTCOMES = ['completed', 'noPartner', 'partnerLeft', 'screenedOut'] as const;
export type CompletionOutcome = (typeof COMPLETION_OUTCOMES)[number];

export const completionCodesSchema = z
  .strictObject({
    /** Played the study's games to the end. */
    completed: completionCode,
    /** Waited waitForPartnerSeconds without a partner. */
    noPartner: completionCode,
    /** The partner left (or was disconnected for good) during a game. */
    partnerLeft: completionCode,
    /** Failed every attempt at the quiz. (Who declines consent gets no code: they return the study.) */
    screenedOut: completionCode,
  })
  .superRefine((codes, ctx) => {
    COMPLETION_OUTCOMES.forEach((outcome, i) => {
      const earlier = COMPLETION_OUTCOMES.slice(0, i).find((other) => codes[other] === codes[outcome]);
      if (earlier) ctx.addIssue({ code: 'custom', path: [outcome], message: `is the same code as ${earlier}: each ending needs a code of its own` });
    });
  });

/**
 * Who may become a study's worker, how fast, and who may be partners: a limit on made-up ids,
 * which anyone can type into a study's link (docs/security.md). The defaults depend on the
 * platform: a lab's participants share the lab's address, a crowd's do not.
 */
export const admissionSchema = z.strictObject({
  /** New workers one address (an IPv6 /64) may become in an hour; null: no limit. 5 by default, none in a lab. */
  newWorkersPerAddressPerHour: z.number().int('must be a whole number').min(1, 'must be at least 1 (or null: no limit)').max(100_000, 'must be at most 100000').nullable().optional(),
  /** New workers the study takes in a minute, from anywhere: a flood waits, and a participant's page tries again by itself. */
  newWorkersPerMinute: z.number().int('must be a whole number').min(1, 'must be at least 1').max(100_000, 'must be at most 100000').default(60),
  /** Whether two workers who asked to play from one address may be partners: no by default (one person in both seats), yes in a lab. */
  sameAddressPartners: z.boolean().optional(),
  /**
   * In a study with arms, the workers from one address who may start playing with the arms' agents
   * in an hour (each game starts an agent, which may call a paid LLM); null: no limit.
   * 5 by default, 20 in a lab (whose participants share its address).
   */
  armWorkersPerAddressPerHour: z.number().int('must be a whole number').min(1, 'must be at least 1 (or null: no limit)').max(100_000, 'must be at most 100000').nullable().optional(),
});

/** A crowd study's default for admission.newWorkersPerAddressPerHour (a household, a shared network). */
export const DEFAULT_NEW_WORKERS_PER_ADDRESS_PER_HOUR = 5;

/** The defaults for admission.armWorkersPerAddressPerHour: a crowd's (as a household's new workers) and a lab's (a room of participants an hour). */
export const DEFAULT_ARM_WORKERS_PER_ADDRESS_PER_HOUR = { crowd: 5, lab: 20 } as const;

/** Prolific's completion URL, with `{code}` where the completion code goes. */
export const PROLIFIC_COMPLETION_URL = 'https://app.prolific.com/submissions/complete?cc={code}';
export const CODE_PLACEHOLDER = '{code}';

function isHttpsUrl(value: string): boolean {
  try {
    return new URL(value.replace(CODE_PLACEHOLDER, 'CODE')).protocol === 'https:';
  } catch {
    return false;
  }
}

export const prolificSchema = z.strictObject({
  kind: z.literal('prolific'),
  /** Where a participant is sent at the end, `{code}` replaced by the completion code. */
  completionUrl: z
    .string()
    .trim()
    .refine((url) => url.split(CODE_PLACEHOLDER).length === 2, `must contain ${CODE_PLACEHOLDER} once, where the completion code goes, as in ${PROLIFIC_COMPLETION_URL}`)
    .refine(isHttpsUrl, 'must be an https:// URL')
    .default(PROLIFIC_COMPLETION_URL),
});

export const mturkSchema = z.strictObject({
  kind: z.literal('mturk'),
  /**
   * The worker sandbox (true) or the real marketplace (false). Only says which requester site the
   * HIT belongs on; a worker's answers go to the turkSubmitTo MTurk sends with the assignment.
   */
  sandbox: z.boolean().default(true),
  /** The ExternalQuestion's FrameHeight in pixels; 0 lets the frame fill the worker's window. */
  frameHeight: z.number().int('must be a whole number of pixels').min(0, 'must not be negative').max(10_000, 'must be at most 10000').default(0),
});

function compiles(pattern: string): boolean {
  try {
    new RegExp(pattern, 'u');
    return true;
  } catch {
    return false;
  }
}

export const labSchema = z.strictObject({
  kind: z.literal('lab'),
  /** The label of the box where a lab participant types the id the experimenter gives them. */
  participantIdLabel: text(200).default('Participant id'),
  /** A regular expression the whole typed id must match (e.g. "P[0-9]{3}"); any id when left out. */
  participantIdPattern: z.string().min(1, 'must not be empty').max(200, 'must be at most 200 characters').refine(compiles, 'is not a valid regular expression').optional(),
});

export const PLATFORM_KINDS = ['prolific', 'mturk', 'lab'] as const;
export type PlatformKind = (typeof PLATFORM_KINDS)[number];

export const platformSchema = z.discriminatedUnion('kind', [prolificSchema, mturkSchema, labSchema], {
  error: (issue) => (issue.code === 'invalid_union' ? `must be one of ${PLATFORM_KINDS.join(', ')}` : undefined),
});

/** Extra rules text: a Markdown file next to the study file, or the Markdown itself. */
export const rulesSchema = z.union([z.strictObject({ file: markdownPath }), z.strictObject({ text: text(20_000) })], {
  error: 'must be {file: some.md} or {text: ...}',
});

const PROFILE_NAMES = Object.keys(RULES_PROFILES) as [RulesProfile, ...RulesProfile[]];

/**
 * The rules the study's games are played by (docs/rules.md): a profile, and CB2's options for the
 * leader on top of it (each the profile's when left out, so the output says what the games do).
 */
export const studyGameSchema = z
  .strictObject({
    rules: z.enum(PROFILE_NAMES, { error: `must be one of ${PROFILE_NAMES.join(', ')}` }).default('cerealbar'),
    liveFeedback: z.boolean().optional(),
    cancelInstructions: z.boolean().optional(),
  })
  .transform((game) => {
    const profile = profileConfig(game.rules);
    return {
      rules: game.rules,
      liveFeedback: game.liveFeedback ?? profile.liveFeedback,
      cancelInstructions: game.cancelInstructions ?? profile.cancelInstructions,
    };
  });
export type StudyGame = z.output<typeof studyGameSchema>;

/** The config of a study's games, by its `game`, with the profile's clocks (the room puts `time`'s on top). */
export function studyGameConfig(game: StudyGame): GameConfig {
  return profileConfig(game.rules, { liveFeedback: game.liveFeedback, cancelInstructions: game.cancelInstructions });
}

// ---------------------------------------------------------------------------------------------
// The study

const studyObjectSchema = z.strictObject({
  id: studyIdSchema,
  /** The study's name, shown to participants and as the HIT's title. */
  title: text(200),
  /** One paragraph, shown in the platform's preview (MTurk's HIT description) and on the first page. */
  description: text(2000),
  /** The consent form: a Markdown file, relative to the study file. */
  consent: markdownPath,
  /** More to read before the tutorial, beyond the game's own rules; optional. */
  rules: rulesSchema.optional(),
  pay: paySchema,
  time: timeSchema.prefault({}),
  quiz: quizSchema,
  roles: rolesSchema.prefault({}),
  completionCodes: completionCodesSchema,
  platform: platformSchema,
  /** The matchmaking pool of the study's games; the study id when left out. */
  pool: poolNameSchema.optional(),
  /** The rules of the study's games; the server's (`serve --rules` and its options) when left out. */
  game: studyGameSchema.optional(),
  /** Agents for the seat the participants do not play, one drawn for each game (shared/study/arms.ts); none: participants play each other. */
  arms: armsSchema.optional(),
  /** Limits on new workers, and whether workers at one address may be partners. */
  admission: admissionSchema.prefault({}),
  /** Games played to their end in one session (one Prolific submission, one MTurk assignment) before the completed code. */
  gamesPerSession: z.number().int('must be a whole number of games').min(1, 'must be at least 1').max(50, 'must be at most 50').default(1),
});

export const studyFileSchema = studyObjectSchema
  .superRefine((study, ctx) => {
    const armRoles = study.arms && armRolesProblem(study.roles);
    if (armRoles) ctx.addIssue({ code: 'custom', path: armRoles[0], message: armRoles[1] });
    if ((study.pool ?? study.id) === DEFAULT_POOL) {
      ctx.addIssue({
        code: 'custom',
        path: [study.pool === undefined ? 'id' : 'pool'],
        message: `"${DEFAULT_POOL}" is the public quick-play pool: a study needs a pool of its own${study.pool === undefined ? ' (set pool, or choose another id)' : ''}`,
      });
    }
    if (study.platform.kind === 'mturk') {
      if (study.pay.currency !== 'USD') ctx.addIssue({ code: 'custom', path: ['pay', 'currency'], message: `MTurk pays in USD only, not ${study.pay.currency}` });
      if (study.pay.base < 0.01) ctx.addIssue({ code: 'custom', path: ['pay', 'base'], message: "is the HIT's reward on MTurk, which must be at least 0.01" });
    }
  })
  .transform((study) => {
    const lab = study.platform.kind === 'lab';
    const { newWorkersPerAddressPerHour, sameAddressPartners, newWorkersPerMinute, armWorkersPerAddressPerHour } = study.admission;
    return {
      ...study,
      pool: study.pool ?? study.id,
      admission: {
        newWorkersPerAddressPerHour: newWorkersPerAddressPerHour === undefined ? (lab ? null : DEFAULT_NEW_WORKERS_PER_ADDRESS_PER_HOUR) : newWorkersPerAddressPerHour,
        newWorkersPerMinute,
        sameAddressPartners: sameAddressPartners ?? lab,
        armWorkersPerAddressPerHour: armWorkersPerAddressPerHour === undefined ? DEFAULT_ARM_WORKERS_PER_ADDRESS_PER_HOUR[lab ? 'lab' : 'crowd'] : armWorkersPerAddressPerHour,
      },
    };
  });

/** The study file as written (defaults optional). */
export type StudyFileInput = z.input<typeof studyFileSchema>;
/** The study file as read: every default filled in, `pool` resolved. */
export type StudyFile = z.output<typeof studyFileSchema>;
export type QuizQuestion = StudyFile['quiz']['questions'][number];
export type Platform = StudyFile['platform'];
export type PromotionRule = z.output<typeof promotionRuleSchema>;

/** A loaded study: the file, with the Markdown it names read. */
export interface Study extends StudyFile {
  /** The consent form's Markdown. */
  readonly consentText: string;
  /** The extra rules' Markdown (from the file or inline), or null. */
  readonly rulesText: string | null;
}

/** Where a participant who ended with `outcome` is sent on Prolific (null on other platforms). */
export function completionUrl(study: StudyFile, outcome: CompletionOutcome): string | null {
  if (study.platform.kind !== 'prolific') return null;
  return study.platform.completionUrl.replace(CODE_PLACEHOLDER, encodeURIComponent(study.completionCodes[outcome]));
}

// ---------------------------------------------------------------------------------------------
// What anyone may see

/** The parts of a study a participant's pages show: no answers, no completion codes, no pool. */
export interface PublicStudy {
  readonly id: string;
  readonly title: string;
  readonly description: string;
  readonly pay: StudyFile['pay'];
  readonly time: { readonly waitForPartnerSeconds: number; readonly sessionMinutes: number };
  readonly gamesPerSession: number;
  readonly consent: string;
  readonly rules: string | null;
  /**
   * What the rules page says of the participants' games: whether the partner is another
   * participant (no arms) or not, and what the leader may do in the follower's turn.
   */
  readonly game: { readonly partnerIsPerson: boolean; readonly liveFeedback: boolean; readonly cancelInstructions: boolean };
  readonly quiz: {
    readonly questions: readonly { readonly prompt: string; readonly choices: readonly string[] }[];
    readonly passMark: number;
    readonly attempts: number;
  };
  readonly platform:
    | { readonly kind: 'prolific' | 'mturk' }
    | { readonly kind: 'lab'; readonly participantIdLabel: string; readonly participantIdPattern: string | null };
}

/**
 * A study as its pages may show it to anyone: built field by field, so a field added to the study
 * later stays private until it is added here. Answers and explanations stay out (the quiz is
 * marked on the server), and so do the completion codes (whoever knew one could claim pay).
 */
/** What anyone may see of `study`, whose games are played by `config` (its own `game`'s, else quick play's). */
export function publicStudy(study: Study, config: Pick<GameConfig, 'liveFeedback' | 'cancelInstructions'>): PublicStudy {
  const { platform } = study;
  return {
    id: study.id,
    title: study.title,
    description: study.description,
    pay: { ...study.pay },
    time: { waitForPartnerSeconds: study.time.waitForPartnerSeconds, sessionMinutes: study.time.sessionMinutes },
    gamesPerSession: study.gamesPerSession,
    consent: study.consentText,
    rules: study.rulesText,
    game: { partnerIsPerson: !study.arms, liveFeedback: config.liveFeedback, cancelInstructions: config.cancelInstructions },
    quiz: {
      questions: study.quiz.questions.map((question) => ({ prompt: question.prompt, choices: [...question.choices] })),
      passMark: study.quiz.passMark,
      attempts: study.quiz.attempts,
    },
    platform:
      platform.kind === 'lab'
        ? { kind: 'lab', participantIdLabel: platform.participantIdLabel, participantIdPattern: platform.participantIdPattern ?? null }
        : { kind: platform.kind },
  };
}
