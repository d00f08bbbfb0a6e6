/** `cerealbar study`: write an example study file, and print the links a platform needs for one. */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { loadStudyFile } from '../../server/study/loadStudy';
import { checkBaseUrl, studyLinks, type StudyLinks } from '../../shared/study/links';
import { StudyFileError } from '../../shared/study/parseStudy';
import { COMPLETION_OUTCOMES, studyIdSchema, type Study } from '../../shared/study/studyFile';
import { CliError } from '../errors';
import { EXAMPLE_CONSENT, EXAMPLE_CONSENT_FILE, EXAMPLE_STUDY_FILE, exampleStudyYaml } from '../study/example';

interface InitOptions {
  id: string;
  out?: string;
}

interface LinksOptions {
  study: string;
  baseUrl: string;
  json?: boolean;
}

/** A study file loaded for a command, or a CliError (exit 2) listing its problems. */
function loadStudyForCli(file: string): Study {
  try {
    return loadStudyFile(file);
  } catch (error) {
    if (error instanceof StudyFileError) throw new CliError(error.message);
    throw error;
  }
}

function studyIdOption(value: string): string {
  const parsed = studyIdSchema.safeParse(value);
  if (!parsed.success) throw new CliError(`--id ${JSON.stringify(value)} ${parsed.error.issues[0].message}`);
  return value;
}

export function registerStudyCommands(program: Command): void {
  const study = program.command('study').description('set up a crowdsourced study: an example study file, the links for Prolific, MTurk or a lab');

  study
    .command('init')
    .description(`write an example study (DIR/${EXAMPLE_STUDY_FILE}, every field explained) and consent form (DIR/${EXAMPLE_CONSENT_FILE}); never overwrites`)
    .requiredOption('--id <id>', 'the study id: lowercase letters, digits and dashes (it is in the study URL)', studyIdOption)
    .option('--out <dir>', 'folder to write to (created if missing); default studies/<id>')
    .action((options: InitOptions) => initStudy(options.id, options.out ?? join('studies', options.id)));

  study
    .command('links')
    .description("print what the study's platform needs: Prolific's study URL and completion URLs, MTurk's ExternalQuestion, or a lab's URL")
    .requiredOption('--study <file>', 'the study file (YAML or JSON)')
    .requiredOption('--base-url <url>', "the server's public address, as in https://study.example.org")
    .option('--json', 'print the links as JSON')
    .action((options: LinksOptions) => {
      let checked: ReturnType<typeof checkBaseUrl>;
      try {
        checked = checkBaseUrl(options.baseUrl);
      } catch (error) {
        throw new CliError(`--base-url: ${(error as Error).message}`);
      }
      const loaded = loadStudyForCli(options.study);
      if (checked.warning) process.stderr.write(`cerealbar: warning: ${checked.warning}\n`);
      const links = studyLinks(loaded, checked.base);
      process.stdout.write(options.json ? `${JSON.stringify(links, null, 2)}\n` : formatLinks(links));
    });
}

function initStudy(id: string, dir: string): void {
  const files = [
    { path: join(dir, EXAMPLE_STUDY_FILE), text: exampleStudyYaml(id) },
    { path: join(dir, EXAMPLE_CONSENT_FILE), text: EXAMPLE_CONSENT },
  ];
  const existing = files.filter((file) => existsSync(file.path)).map((file) => file.path);
  if (existing.length > 0) {
    throw new CliError(`${existing.join(' and ')} already exist${existing.length === 1 ? 's' : ''}: init never overwrites (choose another --out, or move the file away)`);
  }
  try {
    mkdirSync(dir, { recursive: true });
  } catch (error) {
    throw new CliError(`${dir}: cannot create the folder: ${(error as Error).message}`);
  }
  const written: string[] = [];
  for (const file of files) {
    try {
      // 'wx' fails if the file exists, even if it appeared after any check made here.
      writeFileSync(file.path, file.text, { flag: 'wx' });
      written.push(file.path);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const why = code === 'EEXIST' ? 'already exists; init never overwrites (choose another --out, or move the file away)' : `cannot write: ${(error as Error).message}`;
      const partial = written.length > 0 ? ` (${written.join(', ')} was written)` : '';
      throw new CliError(`${file.path}: ${why}${partial}`);
    }
  }
  const say = (line: string) => process.stdout.write(`${line}\n`);
  say(`Wrote ${files[0].path} and ${files[1].path}.`);
  say(`Edit both (the consent form is a template; the completion codes must be your platform's), then:`);
  say(`  cerealbar study links --study ${files[0].path} --base-url https://<your server>`);
  say(`  cerealbar serve --study ${files[0].path}`);
}

function formatLinks(links: StudyLinks): string {
  const lines: string[] = [];
  if (links.prolific) {
    lines.push(`Study ${links.study} on Prolific`, '', 'Study URL (on Prolific: "I\'ll use URL parameters"):', `  ${links.prolific.studyUrl}`, '');
    lines.push('Completion codes (create each on the study\'s page on Prolific) and where each ending is sent:');
    const width = Math.max(...COMPLETION_OUTCOMES.map((outcome) => outcome.length));
    for (const outcome of COMPLETION_OUTCOMES) {
      const { code, url } = links.prolific.completion[outcome];
      lines.push(`  ${outcome.padEnd(width)}  ${code}  ${url}`);
    }
  }
  if (links.mturk) {
    const { mturk } = links;
    lines.push(`Study ${links.study} on MTurk (${mturk.sandbox ? 'sandbox' : 'live marketplace'}: create the HIT on ${mturk.requesterSite})`, '');
    lines.push('ExternalQuestion (the Question of CreateHIT):', mturk.externalQuestion, '');
    lines.push('CreateHIT parameters from the study file:');
    lines.push(`  Title: ${mturk.createHit.Title}`);
    lines.push(`  Reward: ${mturk.createHit.Reward}`);
    lines.push(`  AssignmentDurationInSeconds: ${mturk.createHit.AssignmentDurationInSeconds}`);
    lines.push(`  Description: ${mturk.createHit.Description}`);
  }
  if (links.lab) {
    lines.push(`Study ${links.study} in the lab`, '', 'URL (participants type the id they are given):', `  ${links.lab.url}`);
  }
  return `${lines.join('\n')}\n`;
}
