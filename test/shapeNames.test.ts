/**
 * One name per shape wherever a person or a model reads it: the names of SHAPE_NAMES (what the
 * cards draw), never the engine's values where they differ (a torus, a plus), in the words the code makes
 * and in the texts written by hand (the example study's quiz and consent form, the rules and
 * tutorial pages, the docs).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { COLORS, SHAPES, SHAPE_NAMES, describeCard, shapeName } from '../shared/engine/cards';
import { describeObservation } from '../shared/agents/language';
import { ObservationTracker } from '../shared/agents/observation';
import { describeEvent } from '../shared/log/describe';
import type { LogEvent } from '../shared/log/format';
import { exampleStudyYaml, EXAMPLE_CONSENT } from '../cli/study/example';
import { makeState } from './fixtures';
import { updateState } from '../shared/engine';

const ROOT = join(__dirname, '..');
const NUMBER_WORDS: Readonly<Record<string, number>> = { one: 1, two: 2, three: 3 };
/** "3 green cubes", "one red star": a number, a card colour and the word after it. */
const CARD_PHRASE = new RegExp(String.raw`\b([123]|one|two|three) (${COLORS.join('|')}) ([a-z]+)`, 'gi');
const NAMES = new Set(SHAPES.flatMap((shape) => [SHAPE_NAMES[shape].one, SHAPE_NAMES[shape].many]));
const ENGINE_WORDS = new Set(SHAPES.flatMap((shape) => [shape, `${shape}s`, `${shape}es`]).filter((word) => !NAMES.has(word)));

/** Every card phrase of `text` whose shape word is not the table's name for its number. */
function misnamed(text: string): string[] {
  return [...text.matchAll(CARD_PHRASE)]
    .filter(([, number, , word]) => {
      const count = NUMBER_WORDS[number.toLowerCase()] ?? Number(number);
      const shape = SHAPES.find((s) => SHAPE_NAMES[s].one === word.toLowerCase() || SHAPE_NAMES[s].many === word.toLowerCase() || ENGINE_WORDS.has(word.toLowerCase()));
      return shape !== undefined && word.toLowerCase() !== shapeName(shape, count);
    })
    .map(([phrase]) => phrase);
}

const files = (dir: string, ext: string) => readdirSync(join(ROOT, dir)).filter((name) => name.endsWith(ext)).map((name) => join(dir, name));

test('the table names every shape, one and several, and no two alike', () => {
  expect(Object.keys(SHAPE_NAMES).sort()).toEqual([...SHAPES].sort());
  expect(NAMES.size).toBe(SHAPES.length * 2);
  expect(shapeName('torus', 1)).toBe('circle');
  expect(shapeName('plus', 3)).toBe('crosses');
});

test('the words the code makes use the table: cards in words, the replay, the text observation', () => {
  const state = makeState();
  const [card] = state.cards;
  for (const shape of SHAPES) {
    for (const count of [1, 2, 3] as const) {
      const face = { ...card, shape, count };
      expect(describeCard(face)).toBe(`${count} ${face.color} ${shapeName(shape, count)}`);
      const shown = updateState(state, { cards: [face, ...state.cards.slice(1)] });
      expect(describeObservation(new ObservationTracker().observe(shown))).toContain(`a card with ${describeCard(face)}`);
      const selected = { actor: 'follower', type: 'move', payload: { move: 'MF' }, outcome: { toggled: [face.id] } } as unknown as LogEvent;
      expect(describeEvent(selected, [face])).toContain(`The follower selected ${count} ${face.color} ${shapeName(shape, count)}`);
    }
  }
});

test("the texts written by hand name shapes by the table's names only", () => {
  const texts: [string, string][] = [
    ['the example study (quiz and consent form)', exampleStudyYaml('pilot') + EXAMPLE_CONSENT],
    ...[...['client/src/study/pages', 'client/src/tutorial', 'client/src/game'].flatMap((dir) => files(dir, '.ts')), 'README.md', 'examples/agents/README.md', ...files('docs', '.md')].map(
      (file): [string, string] => [file, readFileSync(join(ROOT, file), 'utf8')],
    ),
  ];
  const wrong = Object.fromEntries(texts.map(([name, text]) => [name, misnamed(text)]).filter(([, phrases]) => phrases.length > 0));
  expect(wrong).toEqual({});
});

test('the check finds a misnamed shape', () => {
  expect(misnamed('1 red star, 2 blue hearts, 3 green cubes; one yellow plus; 2 black torus; a red hut')).toEqual(['one yellow plus', '2 black torus']);
});
