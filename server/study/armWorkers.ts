/**
 * A study with arms starts an agent for each of its games, which may call a paid LLM, and anyone
 * may become its worker with made-up ids. So the workers from one address (the keyed hash of
 * clientAddress.ts) who start playing with the arms in an hour are limited by the study file's
 * `admission.armWorkersPerAddressPerHour` (P-151), at each one's first request to play; a worker
 * let in plays its next games. They are kept in Colyseus's presence, which several processes share
 * through Redis: for each study and address, each worker with when it was let in.
 */
import { matchMaker } from '@colyseus/core';
import type { StudyFile } from '../../shared/study/studyFile';
import { HOUR_MS, WorkerError } from '../store/workerChanges';

/** What requests whose address is unknown count as: one address, together. */
const UNKNOWN_ADDRESS = 'unknown';

/**
 * Lets the worker play with the study's arms, or refuses it (429 TOO_MANY_NEW_WORKERS, with when
 * to come back) when the limit's workers from its address started within the hour. Workers asking
 * at the same moment are each written first, then ranked by when they came: only those within the
 * limit stay, so a burst of made-up ids gets no more than the limit.
 */
export async function admitArmWorker(study: StudyFile, participantId: string, address: string | undefined, now = Date.now()): Promise<void> {
  const limit = study.admission.armWorkersPerAddressPerHour;
  if (limit === null) return;
  const { presence } = matchMaker;
  const key = `cerealbar:arm-workers:${JSON.stringify([study.id, address ?? UNKNOWN_ADDRESS])}`;
  if (Object.hasOwn(await presence.hgetall(key), participantId)) return;
  await presence.hset(key, participantId, String(now));
  const letIn = Object.entries(await presence.hgetall(key)).map(([worker, at]) => ({ worker, at: Number(at) }));
  // Those let in over an hour ago count no more: forgotten, so that the hash stays small.
  await Promise.all(letIn.filter(({ at }) => at <= now - HOUR_MS).map(({ worker }) => presence.hdel(key, worker)));
  const recent = letIn.filter(({ at }) => at > now - HOUR_MS).sort((a, b) => a.at - b.at || (a.worker < b.worker ? -1 : 1));
  if (recent.findIndex(({ worker }) => worker === participantId) < limit) return;
  await presence.hdel(key, participantId);
  const seconds = Math.max(1, Math.ceil((recent[0].at + HOUR_MS - now) / 1000));
  throw new WorkerError('TOO_MANY_NEW_WORKERS', `too many new participants from this network started playing in this study in the past hour: try again in ${Math.ceil(seconds / 60)} min`, seconds);
}
