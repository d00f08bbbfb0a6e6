/**
 * Golden files under test/llm/golden/: the exact requests the LLM agent sends for fixed
 * observations. `UPDATE_GOLDEN=1 npx jest test/llm` rewrites them; review the diff before committing.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const GOLDEN_DIR = join(__dirname, 'golden');

export function expectGolden(name: string, actual: unknown): void {
  const file = join(GOLDEN_DIR, name);
  const text = `${JSON.stringify(actual, null, 2)}\n`;
  if (process.env.UPDATE_GOLDEN === '1') {
    mkdirSync(GOLDEN_DIR, { recursive: true });
    writeFileSync(file, text);
  }
  if (!existsSync(file)) throw new Error(`no golden file ${file}: write it with UPDATE_GOLDEN=1 and review it`);
  expect(JSON.parse(text)).toEqual(JSON.parse(readFileSync(file, 'utf8')));
}
