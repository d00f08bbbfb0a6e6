/**
 * What the admin page asks of the server, behind the admin token (docs/protocol.md): the studies'
 * overviews, their workers, their games, promote and block, and the downloads.
 */
import type { Role } from '../../../shared/engine/state';
import type { StudyOverview } from '../../../shared/study/overview';
import type { WorkerRecord, WorkerStep } from '../../../shared/study/worker';
import { request, type GameSummary } from '../replay/server';

export type AdminWorker = WorkerRecord & { readonly step: WorkerStep };

/** A game of the index (GET /api/studies/:id/games) with its seats: who played which role. */
export type AdminGame = GameSummary & { readonly seats: readonly { readonly role: Role; readonly kind: 'human' | 'bot'; readonly workerId?: string }[] };

export class AdminApi {
  constructor(readonly token: string) {}

  async studies(): Promise<StudyOverview[]> {
    return ((await (await request('/api/studies', this.token)).json()) as { studies: StudyOverview[] }).studies;
  }

  async workers(studyId: string): Promise<AdminWorker[]> {
    return ((await (await request(`/api/studies/${encodeURIComponent(studyId)}/workers`, this.token)).json()) as { workers: AdminWorker[] }).workers;
  }

  /** The study's own games (the latest 1000), newest first: those the server made for it, never another game of its pool. */
  async games(studyId: string): Promise<AdminGame[]> {
    return ((await (await request(`/api/studies/${encodeURIComponent(studyId)}/games?limit=1000`, this.token)).json()) as { games: AdminGame[] }).games;
  }

  async promote(studyId: string, participantId: string): Promise<void> {
    await request(`/api/studies/${encodeURIComponent(studyId)}/workers/${encodeURIComponent(participantId)}/promote`, this.token, { method: 'POST', body: {} });
  }

  async block(studyId: string, participantId: string, reason: string): Promise<void> {
    await request(`/api/studies/${encodeURIComponent(studyId)}/workers/${encodeURIComponent(participantId)}/block`, this.token, { method: 'POST', body: reason ? { reason } : {} });
  }

  /** A file the server sends as an attachment, saved by the browser under `name`. */
  async download(path: string, name: string): Promise<void> {
    const blob = await (await request(path, this.token)).blob();
    const url = URL.createObjectURL(blob);
    const link = Object.assign(document.createElement('a'), { href: url, download: name });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  }
}
