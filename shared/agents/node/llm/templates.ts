/**
 * Prompt templates: text files, one default per role in shared/agents/prompts/. A template is a
 * list of messages, each opened by a marker line (`--- system ---`, `--- user ---`,
 * `--- assistant ---`); `--- correction ---` opens the user message sent when a reply could not be
 * used and the model is asked again; `--- image ---` opens what the image sent with each observation
 * shows (images.ts), which `{{image}}` stands for when images are on. Text before the first marker
 * is a note for people and is not sent. `{{name}}` is replaced by the variable `name`; a name the
 * role does not give is an error when the template is loaded, not in the middle of a game.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export type LlmRole = 'follower' | 'leader';
export type ChatRole = 'system' | 'user' | 'assistant';

export interface ChatMessage {
  readonly role: ChatRole;
  readonly content: string;
}

export interface PromptTemplate {
  /** The file, as an absolute path. */
  readonly path: string;
  /** sha256 of the file's bytes: which template a record was made with. */
  readonly sha256: string;
  readonly messages: readonly ChatMessage[];
  /** The correction message, with `{{error}}` (the parser's message). */
  readonly correction: string;
  /** What the image sent with each observation shows, for `{{image}}` when images are on; null when the template says nothing of it. */
  readonly image: string | null;
}

/** The variables each role's templates may use. */
export const TEMPLATE_VARIABLES: Readonly<Record<LlmRole, readonly string[]>> = {
  // `examples`: the worked examples of few-shot-k (fewShot.ts), empty when there are none.
  // `image`: the template's image section after a blank line when images are on, else empty.
  follower: ['observation', 'legal', 'instruction', 'steps_left', 'turns_left', 'score', 'examples', 'image'],
  leader: ['observation', 'legal', 'can_instruct', 'max_instruction_length', 'steps_left', 'turns_left', 'score', 'image'],
};

/** Sent on a re-ask when the template has no correction section. */
export const DEFAULT_CORRECTION = 'Your reply could not be used: {{error}}\nAnswer again with only the JSON object.';

const MARKER = /^--- (system|user|assistant|correction|image) ---[ \t]*$/;
const PLACEHOLDER = /\{\{\s*([a-z_]+)\s*\}\}/g;

export class TemplateError extends Error {
  override name = 'TemplateError';
}

/**
 * The shipped templates: beside the sources (shared/agents/prompts, run through tsx or ts-jest),
 * or, from the compiled tree (dist/shared/agents/node/llm), in the sources it was built from.
 */
export function defaultTemplatePath(role: LlmRole): string {
  const candidates = [resolve(__dirname, '../../prompts'), resolve(__dirname, '../../../../../shared/agents/prompts')];
  const dir = candidates.find((candidate) => existsSync(join(candidate, `${role}.txt`))) ?? candidates[0];
  return join(dir, `${role}.txt`);
}

/** Reads and checks a template for `role`; every problem is a TemplateError naming the file. */
export function loadTemplate(role: LlmRole, path = defaultTemplatePath(role)): PromptTemplate {
  const absolute = resolve(path);
  let bytes: Buffer;
  try {
    bytes = readFileSync(absolute);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new TemplateError(`${path}: cannot read the prompt template: ${code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : (error as Error).message}`);
  }
  const parsed = parseTemplate(bytes.toString('utf8'), role, path);
  return { path: absolute, sha256: createHash('sha256').update(bytes).digest('hex'), ...parsed };
}

/** The sections that are not messages: each at most once. */
const NOTES = ['correction', 'image'] as const;
type Note = (typeof NOTES)[number];

/** The messages, correction and image note of a template's text (pure; `name` is for messages). */
export function parseTemplate(text: string, role: LlmRole, name: string): Pick<PromptTemplate, 'messages' | 'correction' | 'image'> {
  const sections: { kind: ChatRole | Note; lines: string[] }[] = [];
  for (const line of text.replace(/\r\n/g, '\n').split('\n')) {
    const marker = MARKER.exec(line);
    if (marker) sections.push({ kind: marker[1] as ChatRole | Note, lines: [] });
    else sections.at(-1)?.lines.push(line);
  }
  const body = (lines: string[]) => lines.join('\n').trim();
  const isNote = (kind: ChatRole | Note): kind is Note => (NOTES as readonly string[]).includes(kind);
  const messages = sections.flatMap((s) => (isNote(s.kind) ? [] : [{ role: s.kind, content: body(s.lines) }]));
  if (!messages.some((m) => m.role === 'user')) throw new TemplateError(`${name}: the prompt template has no "--- user ---" message`);
  if (messages.at(-1)!.role !== 'user') throw new TemplateError(`${name}: the prompt template must end with a user message (the model answers the last one)`);
  const notes: Partial<Record<Note, string>> = {};
  for (const section of sections) {
    if (!isNote(section.kind)) continue;
    if (notes[section.kind] !== undefined) throw new TemplateError(`${name}: the prompt template has more than one "--- ${section.kind} ---" section`);
    notes[section.kind] = body(section.lines);
  }
  const empty = messages.findIndex((m) => m.content === '');
  if (empty >= 0) throw new TemplateError(`${name}: message ${empty + 1} (${messages[empty].role}) of the prompt template is empty`);
  const correction = notes.correction ?? DEFAULT_CORRECTION;
  const content = messages.map((m) => m.content).join('\n');
  checkVariables(content, TEMPLATE_VARIABLES[role], name);
  checkVariables(correction, ['error'], `${name} (correction)`);
  checkVariables(notes.image ?? '', [], `${name} (image)`);
  // Images on, {{image}} would say nothing: the words that say what the image shows are the section's.
  if (notes.image === undefined && usesVariable({ messages }, 'image')) throw new TemplateError(`${name}: the prompt template uses {{image}} but has no "--- image ---" section saying what the image shows`);
  return { messages, correction, image: notes.image ?? null };
}

function checkVariables(text: string, known: readonly string[], name: string): void {
  for (const [, variable] of text.matchAll(PLACEHOLDER)) {
    if (!known.includes(variable)) throw new TemplateError(`${name}: unknown variable {{${variable}}} in the prompt template (known: ${known.join(', ')})`);
  }
}

/** The text with each `{{name}}` replaced (the names were checked when the template was loaded). */
export function fill(text: string, variables: Readonly<Record<string, string>>): string {
  return text.replace(PLACEHOLDER, (_, variable: string) => variables[variable] ?? '');
}

/** Whether the template's messages use the variable `name`. */
export function usesVariable(template: Pick<PromptTemplate, 'messages'>, name: string): boolean {
  return template.messages.some((message) => [...message.content.matchAll(PLACEHOLDER)].some(([, variable]) => variable === name));
}

/** The messages to send for one observation. */
export function render(template: PromptTemplate, variables: Readonly<Record<string, string>>): ChatMessage[] {
  return template.messages.map((message) => ({ role: message.role, content: fill(message.content, variables) }));
}
