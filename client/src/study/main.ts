/**
 * A study's page, /study/<id>: loads the study's public parts, reads how the worker arrived (the
 * platform's ids in the link), and hands over to the flow through the study's steps.
 */
import '../styles.css';
import './study.css';
import { StudyApi, StudyApiError } from './api';
import { readEntry, studyIdOf } from './entry';
import { StudyFlow } from './flow';
import { notFoundPage, unavailablePage } from './pages/arrival';
import { problemText, showFrame } from './pages/frame';

const app = document.getElementById('app')!;

async function open(): Promise<void> {
  const studyId = studyIdOf(location.pathname);
  if (studyId === null) return showFrame(app, notFoundPage(null), null);
  try {
    const study = await new StudyApi(studyId).study();
    new StudyFlow(app, study, readEntry(study.platform.kind, location.search)).start();
  } catch (error) {
    if (error instanceof StudyApiError && error.code === 'NOT_FOUND') showFrame(app, notFoundPage(studyId), null);
    else showFrame(app, unavailablePage(problemText(error), () => void open()), null);
  }
}

void open();
