/**
 * What `cerealbar study init` writes: a study file with every field, each explained, and a consent
 * form to adapt. The quiz's answers follow docs/rules.md; a test loads the result.
 */
import { randomInt } from 'node:crypto';
import { derivedCodesProblem } from '../../shared/study/completionCodes';
import { COMPLETION_OUTCOMES, type CompletionOutcome } from '../../shared/study/studyFile';

export const EXAMPLE_STUDY_FILE = 'study.yaml';
export const EXAMPLE_CONSENT_FILE = 'consent.md';

/** The example's roles: any two new participants are paired, so a study as written runs. */
export const EXAMPLE_ROLES = { newWorkersStartAs: 'either', promotion: 'manual' } as const;

/** The characters of a code: upper-case letters and digits, without those read alike (0 and O, 1 and I). */
export const CODE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
export const CODE_LENGTH = 10;

/** One random code: CODE_LENGTH characters drawn from CODE_ALPHABET by crypto (50 bits). */
function randomCode(): string {
  let code = '';
  for (let i = 0; i < CODE_LENGTH; i += 1) code += CODE_ALPHABET[randomInt(CODE_ALPHABET.length)];
  return code;
}

/**
 * Completion codes for a new study: each drawn on its own, so no code tells anything of another or
 * of the study id; drawn again in the rare case that they look derived all the same (as serve would warn).
 */
export function randomCompletionCodes(id: string): Record<CompletionOutcome, string> {
  for (;;) {
    const codes = Object.fromEntries(COMPLETION_OUTCOMES.map((outcome) => [outcome, randomCode()])) as Record<CompletionOutcome, string>;
    if (new Set(Object.values(codes)).size === COMPLETION_OUTCOMES.length && derivedCodesProblem({ id, completionCodes: codes }) === null) return codes;
  }
}

export function exampleStudyYaml(id: string): string {
  const codes = randomCompletionCodes(id);
  return `# A CerealBar study. Check it with "cerealbar study links --study <this file> --base-url <url>"
# and run it with "cerealbar serve --study <this file>". Every field is described in
# docs/running-a-study.md; fields marked "optional" may be left out (the default is given).

# The study's id: lowercase letters, digits and dashes. Participants open <server>/study/${id}.
id: ${id}

# The study's name, shown to participants (and as the HIT's title on MTurk).
title: A two-player game of giving and following instructions

# One paragraph, shown in the platform's preview (MTurk's HIT description) and on the first page.
# It says "a partner", true whether the partner is another participant or, in a study with arms
# (below), an agent: the pages never claim a person where there may be none.
description: >-
  Play a short online game with a partner. One of you, the leader, sees the whole map and writes
  instructions; the other, the follower, sees only what is in front of them and follows the
  instructions to collect sets of cards. You earn a bonus for every set you collect.

# The consent form: a Markdown file, relative to this file. It must exist when the server starts.
consent: ${EXAMPLE_CONSENT_FILE}

# Optional: more to read before the tutorial, as Markdown. Either inline text, as here, or a file:
#   rules: { file: extra-rules.md }
rules:
  text: |
    Please play with your full attention and write instructions in plain English.
    Do not share personal information in the instructions you write.

# What participants are paid, in units of the currency (not cents).
pay:
  base: 4.50            # the fixed payment (on MTurk: the HIT's reward, and the currency must be USD)
  bonusPerPoint: 0.10   # optional, default 0: bonus for each point (each valid set) of a game
  maxBonus: 3.00        # optional, default none: the most bonus one participant can earn
  currency: GBP         # ISO 4217 code: GBP, USD, EUR, ...

# Time limits (all optional).
time:
  waitForPartnerSeconds: 300   # default 300: wait this long for a partner, then leave with the noPartner code
  sessionMinutes: 30           # default 30: how long a session takes at most, as participants are told
  # leaderTurnSeconds: 45      # default: the server's --leader-seconds, else the game's rules' (45)
  # followerTurnSeconds: 15    # default: the server's --follower-seconds, else the game's rules' (15)

# Optional: the rules of the study's games; default: the server's (serve --rules and its options).
#   rules: cerealbar (default) is the CerealBar paper's; cb2 is CB2's, with the leader's live
#     feedback and cancelling on (docs/rules.md lists what else differs).
#   liveFeedback, cancelInstructions: true or false, on top of the rules; default: the rules'.
# game:
#   rules: cerealbar
#   liveFeedback: true
#   cancelInstructions: true

# A quiz on the rules, after the tutorial. "answer" is the right choice counted from 0
# (0 is the first choice). 2 to 6 choices per question. The explanation is optional and for
# your records only: participants never see it, since it could give an answer away.
quiz:
  questions:
    - prompt: Which player sees the whole map?
      choices:
        - The leader
        - The follower
        - Both players
      answer: 0
      explanation: The leader sees the whole map. The follower sees only what is in front of them.
    - prompt: Which three cards make a valid set?
      choices:
        - 1 red star, 2 blue stars, 3 green stars
        - 1 red star, 2 blue hearts, 3 green cubes
        - 2 red stars, 2 blue hearts, 2 green cubes
      answer: 1
      explanation: In a valid set the three colours, the three shapes and the three counts are all different.
    - prompt: You are the follower and you have done what the current instruction asks. What do you do?
      choices:
        - Write the next instruction yourself
        - Mark the instruction as done, to get the next one
        - Wait until your time runs out
      answer: 1
      explanation: The follower marks each instruction done; only the leader writes instructions.
  passMark: 3      # optional, default: every question. Right answers needed in one attempt.
  attempts: 2      # optional, default 2. Who fails every attempt leaves with the screenedOut code.

# Who plays which role (optional). Every game needs a leader and a follower.
#   either (default): each new participant practises both roles, and any two are paired, one
#     of them leading.
#   follower: the CerealBar paper's protocol: new participants follow, paired with experienced
#     leaders, and good followers are promoted to lead. No game starts until there is a leader:
#     promote the first ones on the admin page (a promotion rule cannot make them, as its games
#     as follower need leaders). For it write
#       newWorkersStartAs: follower
#       promotion: { afterGames: 3, minMeanScore: 2 }   # or manual
#     (promoted after 3 completed games as follower with a mean score of at least 2).
#   leader: every new participant leads; followers must come from an earlier setting.
roles:
  newWorkersStartAs: ${EXAMPLE_ROLES.newWorkersStartAs}   # default either; or follower, or leader
  # How a follower becomes a leader: "manual" (default: on the admin page), or a rule, with
  # newWorkersStartAs: follower only, as above.
  promotion: ${EXAMPLE_ROLES.promotion}

# Optional: arms, to compare agents by the games people play with them (docs/study-arms.md).
# The participants play one role (newWorkersStartAs: leader or follower, promotion: manual) and
# each game's other seat is the agent of one arm, drawn for the game by weight and never shown
# to the participant. An agent is a built-in one (followers: heuristic, random; the leader:
# scripted), llm with its settings (the keys of docs/llm.md; the API key only by its variable's
# name), or a program's command line.
# The description and the consent form must not promise another participant (serve and study
# links warn when they do).
# arms:
#   - id: heuristic
#     agent: heuristic
#     weight: 1
#   - id: my-model
#     agent: llm
#     llm: { base-url: "http://localhost:8000/v1", model: my-model, api-key-env: MY_KEY }
#     weight: 1

# Completion codes, one per way a session can end: random and unrelated, drawn for this file,
# so that no code gives away another (a screened-out participant learns theirs). Use them as
# they are or replace them with random codes of your own; never codes that share a stem or
# contain the study id (serve warns of those). On Prolific create the same codes on the
# study's page (each may trigger its own action there).
completionCodes:
  completed: "${codes.completed}"      # played to the end
  noPartner: "${codes.noPartner}"      # no partner came in waitForPartnerSeconds
  partnerLeft: "${codes.partnerLeft}"    # the partner left during a game
  screenedOut: "${codes.screenedOut}"    # failed every attempt at the quiz

# Where participants come from: one of
#   kind: prolific   completionUrl (optional): default https://app.prolific.com/submissions/complete?cc={code}
#   kind: mturk      sandbox (optional, default true), frameHeight (optional, default 0: the whole window);
#                    pay.currency must be USD
#   kind: lab        participantIdLabel (optional, default "Participant id"),
#                    participantIdPattern (optional: a regular expression the typed id must match;
#                    give participants random ids, as [A-Z0-9]{8}: whoever types an id first is
#                    that participant, so ids like P001 let a stranger take their places)
platform:
  kind: prolific

# Optional: who may join, how fast, and who may be partners. Anyone can open the study's link
# with made-up ids; these limits keep them from flooding the study or holding both seats.
# admission:
#   newWorkersPerAddressPerHour: 5    # default 5 (none in a lab); null: no limit. An IPv6 address counts by its /64
#   newWorkersPerMinute: 60           # default 60: beyond it, a participant's page waits and tries again by itself
#   sameAddressPartners: false        # default false (true in a lab): two participants at one address are never partners

# Optional: the matchmaking pool of the study's games; default: the study id.
# pool: ${id}

# Optional, default 1: games played to their end in one session (one Prolific submission,
# one MTurk assignment) before the completed code is given.
# gamesPerSession: 1
`;
}

export const EXAMPLE_CONSENT = `# Consent to take part in a research study

> This is an example. Replace every part in [brackets], and have your ethics board approve the
> text, before you run the study.

- **Study:** [title of the study]
- **Researchers:** [names, institution, contact email]
- **Ethics approval:** [board and reference number]

## What you will do

You will play an online game with a partner, for about [N] minutes: first a short tutorial and a
quiz on the rules, then one or more games. One player (the leader) writes instructions; the other
(the follower) carries them out. [In a study with arms, say here whether your partner may be a
computer program, as your ethics board requires; never which, and never that it is a person.]

## Payment

You will be paid [base payment] for taking part, and a bonus of [amount] for every point your
games score, up to [maximum bonus].

## What we record

Every action in the game, the instructions written and their timing, and your [Prolific / MTurk /
participant] id. We do not ask for your name or any other personal information. Please do not
write personal information in the instructions.

## How the data is used

The recorded games are used for research on language and collaboration, and may be published
as a data set without your platform id. [Say where the data is stored, for how long, and who can
see it.]

## Your rights

Taking part is voluntary. You may stop at any time by closing the page; [say what happens to the
payment and the data of someone who stops]. You may ask us to delete your data by writing to
[contact email] with your id, until [date].

## Consent

By clicking "I agree" you confirm that you are at least 18 years old, that you have read this
page, and that you agree to take part.
`;
