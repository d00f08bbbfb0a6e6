/**
 * Browser client benchmark: `npm run bench:client` builds the client for production, then prints
 * what each page downloads before its first screen (gzip-compressed, as a server would send it),
 * the lazily loaded game screen, and how long the first screens take in headless chromium on
 * loopback (median of cold loads, each in a fresh browser context with an empty cache), and how
 * soon a key press is drawn: from the moment the server's answer arrives on the page's websocket to
 * the first frame that draws it, in frames and milliseconds.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { launchChromium } from '../shared/frames/node/chromium';
import { CLIENT_DIST } from '../shared/frames/node/clientDist';
import { mountClient } from '../server/http/client';
import { startGameServer } from '../server/index';
import { SqliteWorkerStore } from '../server/store/SqliteWorkerStore';
import { loadStudyFile } from '../server/study/loadStudy';
import { makeConfig } from '../shared/engine/config';
import { EXAMPLE_CONSENT, exampleStudyYaml } from '../cli/study/example';
import type { Browser } from 'playwright-core';

const LOADS = Number(process.env.LOADS ?? 15);
const KEY_PRESSES = 60;
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} kB`;
const gzipSize = (file: string) => gzipSync(readFileSync(join(CLIENT_DIST, file)), { level: 9 }).length;

/** The scripts, modulepreloads and stylesheets a page's HTML names: what loads before its first screen. */
function initialAssets(page: string): string[] {
  const html = readFileSync(join(CLIENT_DIST, page), 'utf8');
  return [...html.matchAll(/(?:src|href)="\/(assets\/[^"]+)"/g)].map((match) => match[1]);
}

async function main(): Promise<void> {
  const rows: [string, number][] = [];
  for (const [name, page] of [['lobby (game page)', 'index.html'], ['replay viewer', 'replay/index.html'], ["a study's pages", 'study/index.html']] as const) {
    const assets = initialAssets(page);
    rows.push([`${name}: ${assets.length} files before the first screen`, assets.reduce((sum, file) => sum + gzipSize(file), 0)]);
  }
  // What the lobby loads later: the connection right after its first screen, the game screen when the player joins.
  const lobbyAssets = new Set(initialAssets('index.html'));
  const entry = readFileSync(join(CLIENT_DIST, initialAssets('index.html').find((file) => /\/game-[^/]+\.js$/.test(file))!), 'utf8');
  const lazyFiles = new Set([...entry.matchAll(/(?:assets|\.)\/([\w.-]+\.js)/g)].map((match) => `assets/${match[1]}`).filter((file) => !lobbyAssets.has(file)));
  for (const file of [...lazyFiles].sort()) rows.push([`  lobby, then ${file.replace(/^assets\/|-[\w-]+\.js$/g, '')} (loaded later)`, gzipSize(file)]);

  // The example study of `study init`, for the study page's first screen (its consent page).
  const dir = mkdtempSync(join(tmpdir(), 'cerealbar-bench-client-'));
  mkdirSync(join(dir, 'study'));
  writeFileSync(join(dir, 'study', 'study.yaml'), exampleStudyYaml('bench'));
  writeFileSync(join(dir, 'study', 'consent.md'), EXAMPLE_CONSENT);
  const study = loadStudyFile(join(dir, 'study', 'study.yaml'));
  const workers = SqliteWorkerStore.open(join(dir, 'data'));
  const server = await startGameServer({
    port: 0,
    host: '127.0.0.1',
    services: { startLog: () => ({ append: () => undefined, end: () => undefined }) },
    studies: [study],
    workers,
    // One long leader turn: every key press is a legal rotation.
    roomSettings: { seed: 1, config: makeConfig({ leaderSteps: 100 }), leaderTurnSeconds: 3600, reconnectSeconds: 0 },
    routes: (app) => {
      if (!mountClient(app).built) throw new Error('the client is not built');
    },
  });
  const browser = await launchChromium();
  const timings: [string, number][] = [];
  for (const [name, path, ready] of [
    ['lobby: navigation to buttons shown', '/', 'button.quick-play'],
    ['replay viewer: navigation to picker shown', '/replay/', 'input[type=file]'],
    ["a study's consent page: navigation (a new worker's session) to Agree shown", '/study/bench?PROLIFIC_PID=bench{i}&STUDY_ID=s&SESSION_ID=s{i}', 'button.agree'],
  ] as const) {
    const samples: number[] = [];
    for (let i = 0; i < LOADS; i++) {
      const context = await browser.newContext();
      const page = await context.newPage();
      // The moment the element is added, seen in the page (a wait from outside would add its polling).
      await page.addInitScript(`new MutationObserver((_, observer) => {
        if (document.querySelector(${JSON.stringify(ready)})) { window.__shown = performance.now(); observer.disconnect(); }
      }).observe(document, { childList: true, subtree: true });`);
      await page.goto(`http://127.0.0.1:${server.port}${path.replaceAll('{i}', String(i))}`, { waitUntil: 'commit' });
      await page.waitForSelector(ready, { state: 'attached' });
      samples.push(await page.evaluate(() => (window as unknown as { __shown: number }).__shown));
      await context.close();
    }
    samples.sort((a, b) => a - b);
    timings.push([name, samples[Math.floor(samples.length / 2)]]);
  }
  const keys = await keyPressLatency(browser, `http://127.0.0.1:${server.port}/`);
  await browser.close();
  await server.close();
  workers.close();
  rmSync(dir, { recursive: true, force: true });

  console.log('Client bundle (gzip -9):');
  for (const [name, bytes] of rows) console.log(`  ${name.padEnd(70)} ${kb(bytes).padStart(10)}`);
  console.log(`First screen, median of ${LOADS} cold loads in headless chromium on loopback:`);
  for (const [name, ms] of timings) console.log(`  ${name.padEnd(70)} ${`${ms.toFixed(0)} ms`.padStart(10)}`);
  console.log(`Key press to its frame, ${keys.length} rotations by the leader (a game with the scripted follower):`);
  const frames = keys.map((key) => key.frames).sort((a, b) => a - b);
  const row = (name: string, values: number[], unit: string, digits: number) =>
    console.log(`  ${name.padEnd(52)} median ${values[Math.floor(values.length / 2)].toFixed(digits)}${unit}, max ${values[values.length - 1].toFixed(digits)}${unit}`);
  row("frames from the server's answer arriving to the frame that draws it", frames, '', 0);
  row("  the same in ms (the answer's arrival to the end of that frame's drawing)", keys.map((key) => key.drawnMs).sort((a, b) => a - b), ' ms', 1);
  row('key press to its frame drawn, the round trip included', keys.map((key) => key.totalMs).sort((a, b) => a - b), ' ms', 1);
  process.exit(0);
}

/**
 * Watches the page from outside the client: a frame counter, the websocket's messages, the moment
 * the game view changes (the client's `window.__game`) and WebGL's draw calls. Plain JavaScript in a
 * string: tsx would wrap a function's names in helpers the page does not have.
 */
const PROBE = `
  const probe = { frame: 0, key: 0, arrival: { t: 0, frame: 0 }, update: null, draw: null };
  window.__probe = probe;
  const count = () => { probe.frame++; requestAnimationFrame(count); };
  requestAnimationFrame(count);
  window.addEventListener('keydown', () => { probe.key = performance.now(); }, true);
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', () => { probe.arrival = { t: performance.now(), frame: probe.frame }; });
    }
  };
  let game;
  Object.defineProperty(window, '__game', {
    configurable: true,
    get: () => game,
    set: (value) => {
      game = value;
      probe.update = { t: performance.now(), frame: probe.frame, arrival: probe.arrival };
      probe.draw = null;
    },
  });
  for (const name of ['drawElements', 'drawArrays']) {
    const draw = WebGL2RenderingContext.prototype[name];
    WebGL2RenderingContext.prototype[name] = function (...args) {
      draw.apply(this, args);
      // The last draw call of the first frame after the update: when it ends, the change is drawn.
      if (probe.update && (probe.draw === null || probe.draw.frame === probe.frame)) probe.draw = { t: performance.now(), frame: probe.frame };
    };
  }
`;

/**
 * The leader presses Left and Right in turn. The page's websocket, its WebGL draw calls and a frame
 * counter are watched (PROBE): for each press, the last message that arrived before the page's game
 * view changed, and the first frame that drew after it.
 */
async function keyPressLatency(browser: Browser, url: string): Promise<{ frames: number; drawnMs: number; totalMs: number }[]> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  await page.addInitScript(PROBE);
  await page.goto(url);
  await page.click('button.bot-game');
  await page.waitForFunction(() => {
    const game = (window as unknown as { __game?: { view: { phase: string; turn: { role: string } } } }).__game;
    return game?.view.phase === 'playing' && game.view.turn.role === 'leader';
  });
  const heading = () => page.evaluate(() => (window as unknown as { __game: { view: { leader: { heading: string } } } }).__game.view.leader.heading);
  const samples: { frames: number; drawnMs: number; totalMs: number }[] = [];
  for (let i = 0; i < KEY_PRESSES; i++) {
    const before = await heading();
    await page.keyboard.press(i % 2 === 0 ? 'ArrowLeft' : 'ArrowRight');
    await page.waitForFunction((old) => (window as unknown as { __game: { view: { leader: { heading: string } } } }).__game.view.leader.heading !== old, before);
    // The next frame plus one: by then the change is drawn, or it was late.
    await page.waitForFunction(() => {
      const probe = (window as unknown as { __probe: { frame: number; update: { frame: number } } }).__probe;
      return probe.frame > probe.update.frame + 1;
    });
    samples.push(
      await page.evaluate(() => {
        const probe = (window as unknown as { __probe: { key: number; update: { arrival: { t: number; frame: number } }; draw: { t: number; frame: number } } }).__probe;
        const arrival = probe.update.arrival;
        return { frames: probe.draw.frame - arrival.frame, drawnMs: probe.draw.t - arrival.t, totalMs: probe.draw.t - probe.key };
      }),
    );
  }
  await context.close();
  return samples;
}

void main();
