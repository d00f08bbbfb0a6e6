/** Study links and join options in the lobby: checked with the server's own schema before joining. */
import { codeProblem, joinOptions, readLink } from '../../client/src/lobby/joinRequest';

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

  test('joining a private game adds its code; creating one asks the server for a new private game, with no code', () => {
    expect(joinOptions({}, { role: 'leader', code: 'k3x9pa' })).toEqual({ role: 'leader', code: 'k3x9pa' });
    expect(joinOptions(link, { role: 'any', private: true })).toEqual({ role: 'any', private: true, pool: 'expert', workerId: 'W1', assignmentId: 'A1', hitId: 'H1' });
  });

  test('the scripted follower makes the player the leader', () => {
    expect(joinOptions(link, { role: 'follower', botFollower: true })).toMatchObject({ role: 'leader', botFollower: true, pool: 'expert' });
  });

  test('an agent leader makes the player the follower', () => {
    expect(joinOptions(link, { role: 'leader', botLeader: true })).toEqual({ role: 'follower', botLeader: true, pool: 'expert', workerId: 'W1', assignmentId: 'A1', hitId: 'H1' });
  });

  test('a typed code is checked with the server\'s schema, in any case', () => {
    expect(codeProblem('K3X9PAQ2MN')).toBeNull();
    expect(codeProblem('no spaces')).toMatch(/^That is not a game code: codes use letters, digits, _ and -\.$/);
  });
});
