/** Study links and join options in the lobby: checked with the server's own schema before joining. */
import { joinOptions, newPrivateCode, readLink } from '../../client/src/lobby/joinRequest';

describe('study links', () => {
  test('the pool, the crowdsourcing ids, a role and a code are read from the query string', () => {
    const { parameters, problem } = readLink('?pool=expert&workerId=W1&assignmentId=A1&hitId=H1&role=follower&code=abc123&other=x');
    expect(problem).toBeNull();
    expect(parameters).toEqual({ pool: 'expert', workerId: 'W1', assignmentId: 'A1', hitId: 'H1', role: 'follower', code: 'abc123' });
  });

  test('empty values are left out', () => {
    expect(readLink('?pool=&workerId=')).toEqual({ parameters: {}, problem: null });
  });

  test.each([
    ['?pool=bad%20pool', /bad pool: pool names use letters, digits, _ and -/],
    ['?role=boss', /bad role/],
    [`?workerId=${'w'.repeat(201)}`, /bad workerId/],
    ['?code=no%20spaces', /bad code/],
  ])('a bad link %s is reported, and nothing of it is kept', (search, message) => {
    const { parameters, problem } = readLink(search);
    expect(problem).toMatch(message);
    expect(parameters).toEqual({});
  });
});

describe('join options', () => {
  const link = { pool: 'expert', workerId: 'W1', assignmentId: 'A1', hitId: 'H1', role: 'follower' as const, code: 'shared' };

  test('quick play keeps the pool and the ids, and not the link\'s code', () => {
    expect(joinOptions(link, { role: 'any' })).toEqual({ role: 'any', pool: 'expert', workerId: 'W1', assignmentId: 'A1', hitId: 'H1' });
  });

  test('a private game adds its code', () => {
    expect(joinOptions({}, { role: 'leader', code: 'k3x9pa' })).toEqual({ role: 'leader', code: 'k3x9pa' });
  });

  test('the scripted follower makes the player the leader', () => {
    expect(joinOptions(link, { role: 'follower', botFollower: true })).toMatchObject({ role: 'leader', botFollower: true, pool: 'expert' });
  });

  test('private codes are six easily read characters', () => {
    const codes = Array.from({ length: 200 }, () => newPrivateCode());
    for (const code of codes) expect(code).toMatch(/^[a-hjkmnp-z2-9]{6}$/);
    expect(new Set(codes).size).toBeGreaterThan(190);
    expect(newPrivateCode(() => 0)).toBe('aaaaaa');
  });
});
