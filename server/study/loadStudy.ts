/**
 * Study files from disk: the file, then the Markdown it names (relative to the file's folder),
 * checked and loaded at once, so a server starts only with studies it can show in full (and
 * whose arms' agents exist for their seat).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { checkDistinctStudies, parseStudy, StudyFileError } from '../../shared/study/parseStudy';
import type { Study } from '../../shared/study/studyFile';
import { armChecker, withStudyPaths } from './armAgents';

/** A study as loaded from its file. */
export interface LoadedStudy extends Study {
  /**
   * The SHA-256 (hex) of the study file's bytes as read: its games' log headers record it
   * (`meta.studyFileSha256`), so each game names the version of the study it was played under.
   */
  readonly fileSha256: string;
}

function readBytes(path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : code === 'EACCES' ? 'permission denied' : (error as Error).message;
    throw new Error(`cannot read: ${why}`);
  }
}

const readText = (path: string) => readBytes(path).toString('utf8');

/** The study in `file`, with its consent form and rules read; throws a StudyFileError naming every problem. */
export function loadStudyFile(file: string): LoadedStudy {
  let bytes: Buffer;
  try {
    bytes = readBytes(file);
  } catch (error) {
    throw new StudyFileError(file, [{ message: (error as Error).message }]);
  }
  const study = parseStudy(file, bytes.toString('utf8'), (relativePath) => readText(join(dirname(file), relativePath)), armChecker(dirname(file)));
  const fileSha256 = createHash('sha256').update(bytes).digest('hex');
  return { ...study, ...(study.arms && { arms: study.arms.map((arm) => withStudyPaths(arm, dirname(file))) }), fileSha256 };
}

/** Several study files; also refuses two with the same id. */
export function loadStudyFiles(files: readonly string[]): LoadedStudy[] {
  const studies = files.map(loadStudyFile);
  checkDistinctStudies(studies, files);
  return studies;
}
