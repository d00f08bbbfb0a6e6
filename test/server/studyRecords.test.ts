/** A study's records of its games: written in order, again until the store takes them; a store's refusal is final. */
import { StudyRecords } from '../../server/study/studyRecords';
import { WorkerError } from '../../server/store/workerChanges';

test('P-102: records are written in the order given; a failing store is tried again until it takes them, and said once per failure streak', async () => {
  const warnings: string[] = [];
  const records = new StudyRecords((line) => warnings.push(line), 5);
  const written: string[] = [];
  let failures = 3;
  const first = records.add('start of g1', () => {
    if (failures-- > 0) throw new Error('connect ECONNREFUSED');
    written.push('start');
  });
  const second = records.add('end of g1', () => written.push('end'));
  await Promise.all([first, second]);
  expect(written).toEqual(['start', 'end']);
  expect(warnings).toEqual(['start of g1 could not be written (tried again every 0.005 s until it is): connect ECONNREFUSED', 'start of g1 is written now']);
  expect(await records.settled(10)).toEqual([]);
});

test("P-102: the store's own refusal (a WorkerError) is final: said, dropped, and the next record is written", async () => {
  const warnings: string[] = [];
  const records = new StudyRecords((line) => warnings.push(line), 5);
  const written: string[] = [];
  let tries = 0;
  await records.add('end of g2', () => {
    tries++;
    throw new WorkerError('BLOCKED', 'this worker is blocked from the study');
  });
  await records.add('end of g3', () => written.push('g3'));
  expect(tries).toBe(1);
  expect(written).toEqual(['g3']);
  expect(warnings).toEqual(['end of g2 was refused: this worker is blocked from the study']);
});

test('records still waiting when the time runs out are named', async () => {
  const records = new StudyRecords(() => undefined, 5);
  let away = true;
  const written = records.add('start of g4', () => {
    if (away) throw new Error('the database is away');
  });
  expect(await records.settled(30)).toEqual(['start of g4']);
  away = false;
  await written;
  expect(await records.settled(30)).toEqual([]);
});
