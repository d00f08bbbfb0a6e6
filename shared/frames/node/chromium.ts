/**
 * Headless Chromium for the frame renderer, the browser tests and the client benchmark:
 * CHROMIUM_PATH when set, the system's Chromium when there is one, else the build the
 * @sparticuz/chromium package ships (unpacked on first use), so that nothing but npm is needed.
 * WebGL then runs in software (SwiftShader).
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { ChildProcess } from 'node:child_process';
import { chromium, type Browser } from 'playwright-core';

const SYSTEM_CHROMIUM = '/usr/bin/chromium';
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

/**
 * Signals are the process's own: a run's Ctrl-C finishes the games under way, serve drains.
 * Playwright's handlers would close the browser and exit at once; the browser goes with the process
 * all the same, when its pipe closes.
 */
const OWN_SIGNALS = { handleSIGINT: false, handleSIGTERM: false, handleSIGHUP: false } as const;

/** What to do when no Chromium starts. */
export const CHROMIUM_HELP = 'run `npm ci` (it installs a packaged Chromium), install Chromium (Debian: apt-get install chromium), or set CHROMIUM_PATH';

let found: string | null = null;

export function chromiumPath(): string {
  found ??= process.env.CHROMIUM_PATH ?? (existsSync(SYSTEM_CHROMIUM) ? SYSTEM_CHROMIUM : packagedChromium());
  return found;
}

/**
 * The package is an ES module that finds its archive through import.meta.url, which CommonJS (the
 * CLI's build, Jest) cannot load: a plain Node process unpacks it and says where.
 */
function packagedChromium(): string {
  const script = "import('@sparticuz/chromium').then(async ({ default: packaged }) => process.stdout.write(await packaged.executablePath()))";
  return execFileSync(process.execPath, ['-e', script], { encoding: 'utf8', cwd: __dirname, stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath(), args: ARGS, ...OWN_SIGNALS });
}

/** A browser and its process (the frame renderer watches its memory, and tests kill it). */
export async function launchChromiumProcess(): Promise<{ browser: Browser; process: ChildProcess; close: () => Promise<void> }> {
  const server = await chromium.launchServer({ executablePath: chromiumPath(), args: ARGS, ...OWN_SIGNALS });
  try {
    const browser = await chromium.connect(server.wsEndpoint());
    return { browser, process: server.process(), close: () => server.close() };
  } catch (error) {
    await server.close();
    throw error;
  }
}
