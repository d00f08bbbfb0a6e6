/**
 * Study files from disk: the file, then the Markdown it names (relative to the file's folder),
 * checked and loaded at once, so a server starts only with studies it can show in full (and
 * whose arms' agents exist for their seat).
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { checkDistinctStudies, parseStudy, StudyFileError } from '../../shared/study/parseStudy';
import type { Study } from '../../shared/study/studyFile';
import { armChecker, withStudyPaths } from './armAgents';

function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : code === 'EACCES' ? 'permission denied' : (error as Error).message;
    throw new Error(`cannot read: ${why}`);
  }
}

/** The study in `file`, with its consent form and rules read; throws a StudyFileError naming every problem. */
export function loadStudyFile(file: string): Study {
  let text: string;
  try {
    text = readText(file);
  } catch (error) {
    throw new StudyFileError(file, [{ message: (error as Error).message }]);
  }
  const study = parseStudy(file, text, (relativePath) => readText(join(dirname(file), relativePath)), armChecker(dirname(file)));
  return study.arms ? { ...study, arms: study.arms.map((arm) => withStudyPaths(arm, dirname(file))) } : study;
}

/** Several study files; also refuses two with the same id. */
export function loadStudyFiles(files: readonly string[]): Study[] {
  const studies = files.map(loadStudyFile);
  checkDistinctStudies(studies, files);
  return studies;
}
