/** The study session a browser keeps, per study: read back as saved, and anything unreadable is as if nothing were kept. */
import { forgetSession, loadSession, sameIds, saveSession } from '../../client/src/study/keptSession';

const stored = new Map<string, string>();
beforeAll(() => {
  (globalThis as { localStorage?: unknown }).localStorage = {
    getItem: (key: string) => stored.get(key) ?? null,
    setItem: (key: string, value: string) => void stored.set(key, value),
    removeItem: (key: string) => void stored.delete(key),
  };
});
afterAll(() => {
  delete (globalThis as { localStorage?: unknown }).localStorage;
});
beforeEach(() => stored.clear());

const session = { participantId: 'P1', token: 't0k3n', ids: { PROLIFIC_PID: 'P1', STUDY_ID: 'S', SESSION_ID: 'X' } };

test('saved under the study, read back, forgotten', () => {
  saveSession('pilot', { ...session, waitStartedAt: 1234 });
  expect([...stored.keys()]).toEqual(['cerealbar.study.pilot']);
  expect(loadSession('pilot')).toEqual({ ...session, waitStartedAt: 1234 });
  expect(loadSession('other')).toBeNull();
  forgetSession('pilot');
  expect(loadSession('pilot')).toBeNull();
});

test.each([
  ['not JSON', '{nope'],
  ['no token', JSON.stringify({ participantId: 'P1', ids: {} })],
  ['ids that are not strings', JSON.stringify({ participantId: 'P1', token: 't', ids: { a: 1 } })],
  ['an array', '[]'],
])('%s is as if nothing were kept', (_, text) => {
  stored.set('cerealbar.study.pilot', text);
  expect(loadSession('pilot')).toBeNull();
});

test('a wait start that is not a number is dropped, the session kept', () => {
  stored.set('cerealbar.study.pilot', JSON.stringify({ ...session, waitStartedAt: 'soon' }));
  expect(loadSession('pilot')).toEqual(session);
});

test('the same ids: every field equal, none more or fewer', () => {
  expect(sameIds({ a: '1', b: '2' }, { b: '2', a: '1' })).toBe(true);
  expect(sameIds({ a: '1' }, { a: '1', b: '2' })).toBe(false);
  expect(sameIds({ a: '1', b: '2' }, { a: '1', b: '3' })).toBe(false);
});
