/**
 * Browser client benchmark: `npm run bench:client` builds the client for production, then prints
 * what each page downloads before its first screen (gzip-compressed, as a server would send it),
 * the lazily loaded game screen, and how long the first screens take in headless chromium on
 * loopback (median of cold loads, each in a fresh browser context with an empty cache).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { launchChromium } from '../test/browser/chromium';
import { CLIENT_DIST, mountClient } from '../server/http/client';
import { startGameServer } from '../server/index';

const LOADS = 15;
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} kB`;
const gzipSize = (file: string) => gzipSync(readFileSync(join(CLIENT_DIST, file)), { level: 9 }).length;

/** The scripts, modulepreloads and stylesheets a page's HTML names: what loads before its first screen. */
function initialAssets(page: string): string[] {
  const html = readFileSync(join(CLIENT_DIST, page), 'utf8');
  return [...html.matchAll(/(?:src|href)="\/(assets\/[^"]+)"/g)].map((match) => match[1]);
}

async function main(): Promise<void> {
  const rows: [string, number][] = [];
  for (const [name, page] of [['lobby (game page)', 'index.html'], ['replay viewer', 'replay/index.html']] as const) {
    const assets = initialAssets(page);
    rows.push([`${name}: ${assets.length} files before the first screen`, assets.reduce((sum, file) => sum + gzipSize(file), 0)]);
  }
  const lobbyAssets = new Set(initialAssets('index.html'));
  const lazy = readFileSync(join(CLIENT_DIST, initialAssets('index.html').find((file) => /\/game-[^/]+\.js$/.test(file))!), 'utf8');
  const lazyFiles = [...lazy.matchAll(/assets\/[\w.-]+\.js/g)].map((match) => match[0]).filter((file) => !lobbyAssets.has(file));
  rows.push([`game screen, loaded while waiting for a partner: ${new Set(lazyFiles).size} files`, [...new Set(lazyFiles)].reduce((sum, file) => sum + gzipSize(file), 0)]);

  const server = await startGameServer({
    port: 0,
    host: '127.0.0.1',
    services: { startLog: () => ({ append: () => undefined, end: () => undefined }) },
    routes: (app) => {
      if (!mountClient(app).built) throw new Error('the client is not built');
    },
  });
  const browser = await launchChromium();
  const timings: [string, number][] = [];
  for (const [name, path, ready] of [
    ['lobby: navigation to buttons shown', '/', 'button.quick-play'],
    ['replay viewer: navigation to picker shown', '/replay/', 'input[type=file]'],
  ] as const) {
    const samples: number[] = [];
    for (let i = 0; i < LOADS; i++) {
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(`http://127.0.0.1:${server.port}${path}`, { waitUntil: 'commit' });
      await page.waitForSelector(ready, { state: 'attached' });
      samples.push(await page.evaluate(() => performance.now()));
      await context.close();
    }
    samples.sort((a, b) => a - b);
    timings.push([name, samples[Math.floor(samples.length / 2)]]);
  }
  await browser.close();
  await server.close();

  console.log('Client bundle (gzip -9):');
  for (const [name, bytes] of rows) console.log(`  ${name.padEnd(70)} ${kb(bytes).padStart(10)}`);
  console.log(`First screen, median of ${LOADS} cold loads in headless chromium on loopback:`);
  for (const [name, ms] of timings) console.log(`  ${name.padEnd(70)} ${`${ms.toFixed(0)} ms`.padStart(10)}`);
  process.exit(0);
}

void main();
