/** A study's arms: what the study file accepts, how each problem is named, and the draw of a game's arm. */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { armBlock, armOfDraw } from '../../server/study/arms';
import { roleSettingNote, rolesNobodyCanPlay } from '../../shared/study/roles';
import { armLlmConfig } from '../../server/study/armAgents';
import { loadStudyFile } from '../../server/study/loadStudy';
import type { Arm } from '../../shared/study/arms';
import { StudyFileError } from '../../shared/study/parseStudy';
import { exampleStudyYaml } from '../../cli/study/example';
import { setPath, studyFolder, validStudy, writeStudy } from './fixtures';

let dir: string;
beforeEach(() => {
  dir = studyFolder();
  writeFileSync(join(dir, 'follower-prompt.txt'), '--- user ---\n{{observation}}\n');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const HEURISTIC = { id: 'heuristic', agent: 'heuristic', weight: 2 };
const LLM = { id: 'llm-a', agent: 'llm', llm: { model: 'stub-model', 'base-url': 'http://127.0.0.1:9/v1', 'api-key-env': 'STUB_KEY', prompt: 'follower-prompt.txt', 'max-calls': 30 }, weight: 1 };

/** validStudy() with leaders as participants (the arms follow) and `arms`, with `changes` at dotted paths. */
function armsStudy(arms: unknown, changes: Record<string, unknown> = {}): Record<string, unknown> {
  const data = setPath(validStudy(), 'roles', { newWorkersStartAs: 'leader', promotion: 'manual' });
  data.arms = arms;
  for (const [path, value] of Object.entries(changes)) setPath(data, path, value);
  return data;
}

/** The message of the error loading `data` (failing the test if it loads). */
function problems(data: unknown): string {
  try {
    loadStudyFile(writeStudy(dir, data));
  } catch (error) {
    expect(error).toBeInstanceOf(StudyFileError);
    return (error as Error).message;
  }
  throw new Error('the study loaded');
}

describe("a study file's arms", () => {
  test('load with their defaults; an LLM arm keeps its settings, its prompt found relative to the study file', () => {
    const study = loadStudyFile(writeStudy(dir, armsStudy([HEURISTIC, { ...LLM, weight: undefined }])));
    expect(study.arms).toEqual([HEURISTIC, { ...LLM, weight: 1, llm: { ...LLM.llm, prompt: join(dir, 'follower-prompt.txt') } }]);
    expect(armLlmConfig(study.arms![1])).toMatchObject({ model: 'stub-model', baseUrl: 'http://127.0.0.1:9/v1', apiKeyEnv: 'STUB_KEY', maxCalls: 30, prompt: join(dir, 'follower-prompt.txt'), temperature: 0 });
    // The image settings are an arm's like any other.
    const seeing = loadStudyFile(writeStudy(dir, armsStudy([{ ...LLM, llm: { ...LLM.llm, images: true, 'image-size': '320x240', 'image-detail': 'low' } }]))).arms![0];
    expect(armLlmConfig(seeing)).toMatchObject({ images: true, imageSize: { width: 320, height: 240 }, imageDetail: 'low' });
    // Followers as participants: the arms lead.
    expect(loadStudyFile(writeStudy(dir, armsStudy([{ id: 'scripted', agent: 'scripted' }], { 'roles.newWorkersStartAs': 'follower' }))).arms).toEqual([{ id: 'scripted', agent: 'scripted', weight: 1 }]);
    // A program is a command line.
    expect(loadStudyFile(writeStudy(dir, armsStudy([{ id: 'mine', agent: 'python3 my_agent.py' }, { id: 'path', agent: './agent' }]))).arms).toHaveLength(2);
    expect(loadStudyFile(writeStudy(dir, validStudy())).arms).toBeUndefined();
  });

  test("study init's example, its arms uncommented and its participants leading, loads with them", () => {
    const example = exampleStudyYaml('my-study')
      .replace(/^# (arms:\n)((?:# {3}.*\n)+)/m, (_all, head: string, body: string) => head + body.replace(/^# /gm, ''))
      .replace(/newWorkersStartAs: either/, 'newWorkersStartAs: leader');
    writeFileSync(join(dir, 'example.yaml'), example);
    expect(loadStudyFile(join(dir, 'example.yaml')).arms).toEqual([
      { id: 'heuristic', agent: 'heuristic', weight: 1 },
      { id: 'my-model', agent: 'llm', llm: { 'base-url': 'http://localhost:8000/v1', model: 'my-model', 'api-key-env': 'MY_KEY' }, weight: 1 },
    ]);
    // As written, with its arms commented out, it has none.
    writeFileSync(join(dir, 'example.yaml'), exampleStudyYaml('my-study'));
    expect(loadStudyFile(join(dir, 'example.yaml')).arms).toBeUndefined();
  });

  test.each<[string, unknown, Record<string, unknown>, RegExp]>([
    ['an unknown agent', [{ id: 'a', agent: 'heuristc' }], {}, /arms\[0\]\.agent: "heuristc" is not an agent: the built-in followers are random, heuristic, llm; a program is its command line.* \(line \d+\)/],
    ['an agent of the wrong seat', [{ id: 'a', agent: 'scripted' }], {}, /arms\[0\]\.agent: "scripted" is a built-in leader, not a follower; the built-in followers are .*: the arms play the follower's seat \(the participants are leaders\) \(line \d+\)/],
    ['a follower leading', [{ id: 'a', agent: 'heuristic' }], { 'roles.newWorkersStartAs': 'follower' }, /arms\[0\]\.agent: "heuristic" is a built-in follower, not a leader.*the arms play the leader's seat \(the participants are followers\)/],
    ['a weight of 0', [{ ...HEURISTIC, weight: 0 }], {}, /arms\[0\]\.weight: must be positive \(1 or more\)/],
    ['a negative weight', [{ ...HEURISTIC, weight: -1 }], {}, /arms\[0\]\.weight: must be positive/],
    ['a fractional weight', [{ ...HEURISTIC, weight: 1.5 }], {}, /arms\[0\]\.weight: must be a whole number/],
    ['two arms with one id', [HEURISTIC, { ...LLM, id: 'heuristic' }], {}, /arms\[1\]\.id: "heuristic" is already the id of arm 0: each arm needs an id of its own \(line \d+\)/],
    ['no arms', [], {}, /arms: must list at least one arm/],
    ['a bad id', [{ ...HEURISTIC, id: 'a b' }], {}, /arms\[0\]\.id: must be letters, digits, _ and -/],
    ['an unknown field', [{ ...HEURISTIC, model: 'x' }], {}, /arms\[0\]\.model: is not a field here/],
    ['an LLM arm without settings', [{ id: 'l', agent: 'llm' }], {}, /arms\[0\]\.llm: is required for agent llm/],
    ['an LLM arm without a model', [{ ...LLM, llm: { temperature: 0 } }], {}, /arms\[0\]\.llm: needs model/],
    ['settings for another agent', [{ ...HEURISTIC, llm: { model: 'x' } }], {}, /arms\[0\]\.llm: is for agent llm only; this arm's agent is "heuristic"/],
    ['an API key in the file', [{ ...LLM, llm: { ...LLM.llm, 'api-key': 'sk-secret' } }], {}, /arms\[0\]\.llm\.api-key: the API key itself never goes in a study file: name the environment variable that holds it with api-key-env/],
    ['an unknown LLM setting', [{ ...LLM, llm: { ...LLM.llm, modle: 'x' } }], {}, /arms\[0\]\.llm\.modle: is not a setting of the LLM agent \(its settings: base-url, model, /],
    ['a bad LLM setting', [{ ...LLM, llm: { ...LLM.llm, temperature: 5 } }], {}, /arms\[0\]\.llm\.temperature: /],
    ['a password in the base URL', [{ ...LLM, llm: { ...LLM.llm, 'base-url': 'http://me:pw@localhost/v1' } }], {}, /arms\[0\]\.llm\.base-url: must not hold a user or password/],
    ['a prompt that is not there', [{ ...LLM, llm: { ...LLM.llm, prompt: 'gone.txt' } }], {}, /arms\[0\]\.llm\.prompt: gone\.txt: no such file/],
    ['an image size of nothing', [{ ...LLM, llm: { ...LLM.llm, images: true, 'image-size': '0x0' } }], {}, /arms\[0\]\.llm\.image-size: a frame's sides are 1 to 4096 pixels, not 0x0 \(line \d+\)/],
    ['an image detail there is not', [{ ...LLM, llm: { ...LLM.llm, images: true, 'image-detail': 'max' } }], {}, /arms\[0\]\.llm\.image-detail: must be one of low, high, auto/],
    ['images that are not true or false', [{ ...LLM, llm: { ...LLM.llm, images: 'follower' } }], {}, /arms\[0\]\.llm\.images: /],
    ['participants of either role', [HEURISTIC], { 'roles.newWorkersStartAs': 'either' }, /roles\.newWorkersStartAs: must be follower or leader in a study with arms/],
    ['a promotion rule', [{ id: 's', agent: 'scripted' }], { 'roles.newWorkersStartAs': 'follower', 'roles.promotion': { afterGames: 2, minMeanScore: 1 } }, /roles\.promotion: must be manual in a study with arms/],
  ])('%s is refused, naming the field and its line', (_what, arms, changes, message) => {
    expect(problems(armsStudy(arms, changes))).toMatch(message);
  });

  test('every problem of every arm is listed at once', () => {
    const message = problems(armsStudy([{ id: 'a', agent: 'scripted', weight: 0 }, { id: 'a', agent: 'nobody' }]));
    expect(message.split('\n')).toEqual([
      expect.stringMatching(/arms\[0\]\.weight: must be positive/),
      expect.stringMatching(/arms\[1\]\.id: "a" is already the id of arm 0/),
    ]);
    // The agents are checked once the file's shape is right.
    const agents = problems(armsStudy([{ id: 'a', agent: 'scripted' }, { id: 'b', agent: 'nobody' }]));
    expect(agents.split('\n')).toEqual([expect.stringMatching(/arms\[0\]\.agent: "scripted" is a built-in leader/), expect.stringMatching(/arms\[1\]\.agent: "nobody" is not an agent/)]);
  });
});

test('the role setting of a study with arms pairs every participant: the arms play the other role', () => {
  const study = loadStudyFile(writeStudy(dir, armsStudy([HEURISTIC])));
  expect(rolesNobodyCanPlay(study, [])).toEqual([]);
  expect(roleSettingNote(study.roles, true)).toEqual({
    pairsNewWorkers: true,
    text: "every participant plays leader (roles.newWorkersStartAs: leader), and each game's other seat is an agent of one of the study's arms, drawn for the game.",
  });
  // Without its arms, the same setting holds every game for want of a follower.
  expect(rolesNobodyCanPlay({ ...study, arms: undefined }, [])).toEqual(['follower']);
});

describe("a game's arm", () => {
  const arm = (id: string, weight: number): Arm => ({ id, agent: 'heuristic', weight });
  const counts = (arms: readonly Arm[]) => arms.reduce<Record<string, number>>((sum, a) => ({ ...sum, [a.id]: (sum[a.id] ?? 0) + 1 }), {});

  test('draws come in blocks holding each arm its weight times (over the weights\' common divisor), in a seeded order', () => {
    const arms = [arm('a', 4), arm('b', 2)];
    const drawn = Array.from({ length: 30 }, (_, k) => armOfDraw('pilot-1', arms, k));
    // Blocks of 3 (4:2 is 2:1): exactly the weights' split at the end of each block.
    for (let block = 0; block < 10; block++) expect(counts(drawn.slice(block * 3, block * 3 + 3))).toEqual({ a: 2, b: 1 });
    expect(armBlock('pilot-1', arms, 4)).toEqual(drawn.slice(12, 15));
    // The order is the study's: another study, or other arms, draw another sequence; the same inputs the same one.
    const sequence = (studyId: string, of: readonly Arm[]) => Array.from({ length: 30 }, (_, k) => armOfDraw(studyId, of, k).id).join('');
    expect(sequence('pilot-1', arms)).toBe(drawn.map((a) => a.id).join(''));
    expect(new Set(['pilot-2', 'pilot-3', 'pilot-4'].map((id) => sequence(id, arms))).size).toBeGreaterThan(1);
    expect(new Set(Array.from({ length: 10 }, (_, b) => armBlock('pilot-1', arms, b).map((a) => a.id).join(''))).size).toBeGreaterThan(1);
  });

  test('equal weights of any size make blocks of one of each; three arms of 3:2:1 blocks of six', () => {
    expect(armBlock('s', [arm('a', 50), arm('b', 50)], 0)).toHaveLength(2);
    const arms = [arm('a', 3), arm('b', 2), arm('c', 1)];
    for (let block = 0; block < 5; block++) expect(counts(armBlock('s', arms, block))).toEqual({ a: 3, b: 2, c: 1 });
  });
});
