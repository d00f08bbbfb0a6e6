/**
 * The browser bundle cannot rebuild what the follower must not know: it holds no map generator and
 * no draw of start poses and cards, so a follower's screen is drawn from what the server sends it
 * alone (`npm test` builds the client before jest runs).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLIENT_DIST } from '../../shared/frames/node/clientDist';

const ROOT = join(__dirname, '..', '..');
const ASSETS = join(CLIENT_DIST, 'assets');

/** Texts found only in the code that draws hidden state: the map generator and drawSetup. */
const HIDDEN_STATE_CODE = [
  { file: 'shared/maps/generate.ts', text: 'no playable' },
  { file: 'shared/engine/state.ts', text: 'the seed must be an integer from 0 to' },
  { file: 'shared/engine/state.ts', text: 'inner cells; ' },
];

test('the markers are in the sources (so their absence from the bundle means something)', () => {
  for (const { file, text } of HIDDEN_STATE_CODE) expect(readFileSync(join(ROOT, file), 'utf8')).toContain(text);
});

test('no chunk of the built client holds the map generator or the setup draw', () => {
  if (!existsSync(ASSETS)) throw new Error('no client build: run `npm run build:client` first (npm test does)');
  const chunks = readdirSync(ASSETS).filter((name) => name.endsWith('.js'));
  expect(chunks.length).toBeGreaterThan(0);
  const found = chunks.flatMap((name) => {
    const code = readFileSync(join(ASSETS, name), 'utf8');
    return HIDDEN_STATE_CODE.filter(({ text }) => code.includes(text)).map(({ file }) => `${name} holds code of ${file}`);
  });
  expect(found).toEqual([]);
});
