/**
 * The links a platform needs to send participants to a study: Prolific's study URL with its
 * placeholders, MTurk's ExternalQuestion, a lab's plain URL. Pure, so the admin page can show them
 * too.
 */
import { COMPLETION_OUTCOMES, completionUrl, type CompletionOutcome, type PlatformKind, type StudyFile } from './studyFile';

/** The ExternalQuestion schema's namespace (the 2006-07-14 version, the current one). */
export const EXTERNAL_QUESTION_NAMESPACE = 'http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/2006-07-14/ExternalQuestion.xsd';

/** The query Prolific fills in for each participant: its placeholders, written exactly as Prolific's. */
export const PROLIFIC_QUERY = 'PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}';

export const MTURK_REQUESTER_SITES = { sandbox: 'https://requestersandbox.mturk.com', live: 'https://requester.mturk.com' } as const;

/** Seconds MTurk gives an assignment beyond the study's own session limit, so it never expires first. */
export const MTURK_DURATION_MARGIN_SECONDS = 300;

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

export interface BaseUrl {
  /** scheme://host[:port][/path], no trailing slash. */
  readonly base: string;
  /** Set for plain http on this machine: fine for trying the pages, refused by the platforms. */
  readonly warning: string | null;
}

/**
 * Checks the server's public address: https, or http on localhost only (with a warning), and no
 * query, fragment or credentials. Throws an Error saying what is wrong.
 */
export function checkBaseUrl(value: string): BaseUrl {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`${JSON.stringify(value)} is not a URL: write the server's public address, as in https://study.example.org`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error(`${JSON.stringify(value)} must start with https://`);
  if (url.search !== '' || url.hash !== '') throw new Error(`${JSON.stringify(value)} must not have a query or a fragment: give the server's address only`);
  if (url.username !== '' || url.password !== '') throw new Error(`${JSON.stringify(value)} must not hold a user name or password`);
  const local = LOCAL_HOSTS.has(url.hostname);
  if (url.protocol === 'http:' && !local) {
    throw new Error(`${JSON.stringify(value)} must use https: MTurk and Prolific open studies over HTTPS only (plain http is allowed for localhost)`);
  }
  const base = `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
  const warning = url.protocol === 'http:' ? `${base} is plain http on this machine: fine for trying the pages, but MTurk and Prolific need an https address` : local ? `${base} is on this machine: participants elsewhere cannot reach it` : null;
  return { base, warning };
}

export function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
}

export function externalQuestionXml(externalUrl: string, frameHeight: number): string {
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<ExternalQuestion xmlns="${EXTERNAL_QUESTION_NAMESPACE}">`,
    `  <ExternalURL>${escapeXml(externalUrl)}</ExternalURL>`,
    `  <FrameHeight>${frameHeight}</FrameHeight>`,
    '</ExternalQuestion>',
  ].join('\n');
}

export interface StudyLinks {
  readonly study: string;
  readonly platform: PlatformKind;
  /** The study's page: /study/<id> under the base URL. */
  readonly entryUrl: string;
  readonly prolific?: {
    /** Prolific's "study URL", with its URL parameters. */
    readonly studyUrl: string;
    /** Each ending's code and the URL a participant who ends so is sent to. */
    readonly completion: Readonly<Record<CompletionOutcome, { readonly code: string; readonly url: string }>>;
  };
  readonly mturk?: {
    readonly sandbox: boolean;
    /** Where to create the HIT. */
    readonly requesterSite: string;
    readonly externalQuestion: string;
    /** CreateHIT's parameters that follow from the study (add LifetimeInSeconds, MaxAssignments, ...). */
    readonly createHit: {
      readonly Title: string;
      readonly Description: string;
      readonly Reward: string;
      readonly AssignmentDurationInSeconds: number;
      readonly Question: string;
    };
  };
  readonly lab?: { readonly url: string };
}

/** The links of `study`'s platform, for a server reachable at `base` (checked with checkBaseUrl). */
export function studyLinks(study: StudyFile, base: string): StudyLinks {
  const entryUrl = `${base}/study/${encodeURIComponent(study.id)}`;
  const common = { study: study.id, platform: study.platform.kind, entryUrl };
  const { platform } = study;
  switch (platform.kind) {
    case 'prolific': {
      const completion = Object.fromEntries(COMPLETION_OUTCOMES.map((outcome) => [outcome, { code: study.completionCodes[outcome], url: completionUrl(study, outcome)! }]));
      return { ...common, prolific: { studyUrl: `${entryUrl}?${PROLIFIC_QUERY}`, completion: completion as Record<CompletionOutcome, { code: string; url: string }> } };
    }
    case 'mturk': {
      const externalQuestion = externalQuestionXml(entryUrl, platform.frameHeight);
      return {
        ...common,
        mturk: {
          sandbox: platform.sandbox,
          requesterSite: platform.sandbox ? MTURK_REQUESTER_SITES.sandbox : MTURK_REQUESTER_SITES.live,
          externalQuestion,
          createHit: {
            Title: study.title,
            Description: study.description,
            Reward: study.pay.base.toFixed(2),
            AssignmentDurationInSeconds: study.time.sessionMinutes * 60 + MTURK_DURATION_MARGIN_SECONDS,
            Question: externalQuestion,
          },
        },
      };
    }
    case 'lab':
      return { ...common, lab: { url: entryUrl } };
  }
}
