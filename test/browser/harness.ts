/**
 * Tests in a real browser: headless Chromium (shared/frames/node/chromium.ts) driven by playwright-core, against a real game server
 * that serves the built client (npm test builds it first) with a store in a temporary directory.
 * Screenshots go to test-artifacts/ for people to look at.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../../shared/frames/node/chromium';
import { mountApi } from '../../server/http/api';
import { CLIENT_DIST } from '../../shared/frames/node/clientDist';
import { mountClient } from '../../server/http/client';
import { startGameServer, type GameServerOptions, type RunningGameServer } from '../../server/index';
import type { RoomSettings } from '../../server/rooms/GameRoom';
import { SqliteGameStore } from '../../server/store/SqliteGameStore';
import type { LoadedStudy } from '../../server/study/loadStudy';
import { SqliteWorkerStore } from '../../server/store/SqliteWorkerStore';

export const ARTIFACTS = resolve(__dirname, '../../test-artifacts');
export const ADMIN_TOKEN = 'browser-test-admin-token';

export interface BrowserTestServer {
  readonly url: string;
  /** The temporary data directory: the game index and logs, and the workers' file. */
  readonly dataDir: string;
  readonly store: SqliteGameStore;
  /** The studies' workers, kept in the same temporary data directory (when the server runs studies). */
  readonly workers: SqliteWorkerStore | null;
  readonly server: RunningGameServer;
  /** Moves the workers' clock on by `ms` (time a participant would have spent, such as reading the rules before the quiz). */
  passWorkerTime(ms: number): void;
  close(): Promise<void>;
}

/**
 * `limits` overrides the server's limits on a connection (its message rate); `studies` are run
 * by the server as `serve --study` would, with their workers in the temporary data directory.
 */
export async function startBrowserTestServer(
  roomSettings: RoomSettings = {},
  limits: Pick<GameServerOptions, 'maxMessagesPerSecond' | 'admission'> = {},
  studies: readonly LoadedStudy[] = [],
): Promise<BrowserTestServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'cerealbar-browser-'));
  const store = SqliteGameStore.open(dataDir);
  let skew = 0;
  const workers = studies.length > 0 ? SqliteWorkerStore.open(dataDir, { now: () => Date.now() + skew }) : null;
  const server = await startGameServer({
    ...limits,
    port: 0,
    host: '127.0.0.1',
    roomSettings,
    services: { startLog: (header, info) => store.startGame(header, info) },
    studies,
    ...(workers && { workers }),
    routes: (app) => {
      mountApi(app, { store, adminToken: ADMIN_TOKEN, studies, workers });
      if (!mountClient(app, CLIENT_DIST).built) throw new Error('the client is not built: run "npm run build:client" first');
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    dataDir,
    store,
    workers,
    server,
    passWorkerTime: (ms) => {
      skew += ms;
    },
    close: async () => {
      await server.close();
      workers?.close();
      store.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export function launchBrowser(): Promise<Browser> {
  return launchChromium();
}

/** A screenshot's area, in CSS pixels. */
export interface Box {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

/** The red, green and blue of a screenshot's pixels inside `box`, every `step` px, decoded by the browser in `page` (no image library needed). */
export function pixelsIn(page: Page, png: Buffer, box: Box, step: number): Promise<[number, number, number][]> {
  return page.evaluate(
    async ({ base64, box, step }) => {
      const bytes = Uint8Array.from(atob(base64), (char) => char.charCodeAt(0));
      const bitmap = await createImageBitmap(new Blob([bytes], { type: 'image/png' }));
      const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
      const context = canvas.getContext('2d')!;
      context.drawImage(bitmap, 0, 0);
      const pixels = context.getImageData(Math.round(box.x), Math.round(box.y), Math.round(box.width), Math.round(box.height));
      const samples: [number, number, number][] = [];
      for (let y = 0; y < pixels.height; y += step) {
        for (let x = 0; x < pixels.width; x += step) {
          const at = (y * pixels.width + x) * 4;
          samples.push([pixels.data[at], pixels.data[at + 1], pixels.data[at + 2]]);
        }
      }
      return samples;
    },
    { base64: png.toString('base64'), box, step },
  );
}

/** The documentation's game: seed 11 (cards on the far rows, and in the follower's view after its first step), turns that never run out. */
export const DOCUMENTED_GAME: RoomSettings = { seed: 11, leaderTurnSeconds: 600, followerTurnSeconds: 600 };

/** A test server with `settings` and a browser, started before a test file's tests and closed after them. */
export function serverAndBrowser(settings: RoomSettings): { readonly server: BrowserTestServer; readonly browser: Browser } {
  const started = {} as { server: BrowserTestServer; browser: Browser };
  beforeAll(async () => {
    started.server = await startBrowserTestServer(settings);
    started.browser = await launchBrowser();
  });
  afterAll(async () => {
    await started.server?.close();
    await started.browser?.close();
  });
  return started;
}

let participants = 0;

/**
 * An address of its own for each simulated participant (from IPv6's documentation prefix), which
 * the test server takes from X-Forwarded-For as from a reverse proxy: a study keeps workers at one
 * address apart and limits the new workers of each.
 */
export function participantAddress(): string {
  participants += 1;
  return `2001:db8:${participants.toString(16)}::1`;
}

/**
 * A page that fails the test on any uncaught error in the page, or anything its Content-Security-Policy blocks.
 * Each page is a participant of its own, at an address of its own (participantAddress).
 */
export async function openPage(browser: Browser, url: string, viewport = { width: 1280, height: 800 }): Promise<{ page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport, extraHTTPHeaders: { 'x-forwarded-for': participantAddress() } });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  // Whatever the Content-Security-Policy blocks is reported on the console only.
  page.on('console', (message) => {
    if (message.type() === 'error' && /Content Security Policy/i.test(message.text())) errors.push(message.text());
  });
  await page.goto(url);
  return { page, errors };
}

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path });
  return path;
}
