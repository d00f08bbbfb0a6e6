/**
 * A long-lived frame renderer: headless Chromium with the frames page (client/dist/frames/, built
 * by Vite beside the game's pages), which draws each frame with the game's own world code. Frames
 * travel over a WebSocket on the loopback address as binary messages (a request's JSON goes in,
 * raw RGB or an image file's bytes come out). Requests are sent as they come and drawn in order:
 * a caller with many frames to draw asks for several at once, so that the messages' way to the page
 * and back overlaps the drawing (one at a time, a frame waits for both).
 *
 * A renderer that cannot start throws a `FrameRendererError` whose message is one line saying why
 * and what to do. If the browser or the page dies, the renderer starts again and the frame is tried
 * once more.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { WebSocketServer, type WebSocket } from 'ws';
import { FRAME_FORMATS, rgbBytes, type FrameRequest } from '../frame';
import { CHROMIUM_HELP, launchChromiumProcess } from './chromium';
import { CLIENT_DIST } from './clientDist';

/** How long a page may take to load and connect, and a frame to be drawn. */
const START_MS = 60_000;
const FRAME_MS = 30_000;
const CONTENT_TYPES: Readonly<Record<string, string>> = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css' };

export class FrameRendererError extends Error {
  override name = 'FrameRendererError';
}

export interface FrameRendererOptions {
  /** The built client (default: `CLIENT_DIST`). */
  readonly clientDir?: string;
}

interface Pending {
  readonly resolve: (bytes: Buffer) => void;
  readonly reject: (error: Error) => void;
  readonly timer: NodeJS.Timeout;
}

/** One browser, its page and the socket to it: started together, and ended together. */
interface Session {
  readonly browser: Browser;
  readonly pid: number | undefined;
  readonly closeBrowser: () => Promise<void>;
  readonly page: Page;
  readonly socket: WebSocket;
}

export class FrameRenderer {
  private session: Session | null = null;
  private starting: Promise<Session> | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private closed = false;
  /** Frames tried again because the browser or its page died under them (each in a browser started anew). */
  restarts = 0;

  private constructor(
    private readonly server: Server,
    private readonly sockets: WebSocketServer,
    private readonly token: string,
  ) {}

  /** Starts a renderer: its page served from `clientDir`, and a browser showing it. */
  static async start(options: FrameRendererOptions = {}): Promise<FrameRenderer> {
    const clientDir = options.clientDir ?? CLIENT_DIST;
    if (!existsSync(join(clientDir, 'frames', 'index.html'))) {
      throw new FrameRendererError(`cannot start the frame renderer: ${join(clientDir, 'frames', 'index.html')} is missing; run \`npm run build:client\``);
    }
    const token = randomBytes(16).toString('hex');
    const server = createServer((request, response) => serveFile(clientDir, request.url ?? '/', response));
    const sockets = new WebSocketServer({ server, path: `/${token}` });
    await new Promise<void>((done, fail) => server.once('error', fail).listen(0, '127.0.0.1', done));
    const renderer = new FrameRenderer(server, sockets, token);
    try {
      await renderer.ensureSession();
    } catch (error) {
      await renderer.close();
      throw error;
    }
    return renderer;
  }

  /** The frame's bytes: `rgbBytes(size)` of raw RGB, or a PNG or JPEG file. */
  render(request: FrameRequest): Promise<Buffer> {
    if (this.closed) return Promise.reject(new FrameRendererError('the frame renderer is closed'));
    if (!FRAME_FORMATS.includes(request.format)) return Promise.reject(new FrameRendererError(`unknown frame format "${request.format}"`));
    return this.renderOnce(request).catch((error: unknown) => this.retried(request, error));
  }

  /** The browser's process id (its renderer and GPU processes are its children), while it runs. */
  get browserPid(): number | null {
    return this.session?.pid ?? null;
  }

  async close(): Promise<void> {
    this.closed = true;
    const session = this.session;
    this.session = null;
    this.failPending(new FrameRendererError('the frame renderer was closed'));
    await session?.closeBrowser().catch(() => undefined);
    for (const client of this.sockets.clients) client.terminate();
    await new Promise<void>((done) => this.sockets.close(() => done()));
    await new Promise<void>((done) => this.server.close(() => done()));
  }

  /** A frame that failed because the browser or page died is tried once more in a new one. */
  private async retried(request: FrameRequest, error: unknown): Promise<Buffer> {
    if (!(error instanceof SessionLost) || this.closed) throw error;
    this.restarts++;
    return this.renderOnce(request).catch((again: unknown) => {
      throw again instanceof SessionLost ? new FrameRendererError(`the frame renderer died twice on one frame: ${again.message}`) : again;
    });
  }

  private async renderOnce(request: FrameRequest): Promise<Buffer> {
    const { socket } = await this.ensureSession();
    const id = this.nextId++;
    const bytes = await new Promise<Buffer>((resolveFrame, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        void this.endSession(new SessionLost(`no frame within ${FRAME_MS / 1000} s`));
        reject(new SessionLost(`no frame within ${FRAME_MS / 1000} s`));
      }, FRAME_MS);
      this.pending.set(id, { resolve: resolveFrame, reject, timer });
      // A socket closed under us fails the send: the frame is lost with the session, not left waiting.
      socket.send(JSON.stringify({ id, request }), (error) => error && this.settle(id, (pending) => pending.reject(new SessionLost(`the frames page is gone (${error.message})`))));
    });
    if (request.format === 'rgb' && bytes.length !== rgbBytes(request.size)) {
      throw new FrameRendererError(`the page drew ${bytes.length} bytes, not the ${rgbBytes(request.size)} of a ${request.size.width}x${request.size.height} RGB frame`);
    }
    return bytes;
  }

  private ensureSession(): Promise<Session> {
    if (this.session) return Promise.resolve(this.session);
    this.starting ??= this.startSession().finally(() => (this.starting = null));
    return this.starting;
  }

  private async startSession(): Promise<Session> {
    const launched = await launchChromiumProcess().catch((error: unknown) => {
      throw new FrameRendererError(`cannot start the frame renderer: Chromium did not start (${firstLine(error)}); ${CHROMIUM_HELP}`);
    });
    const { browser } = launched;
    try {
      const page = await browser.newPage({ viewport: { width: 64, height: 64 }, deviceScaleFactor: 1 });
      const connected = new Promise<WebSocket>((done, fail) => {
        const timer = setTimeout(() => fail(new FrameRendererError(`cannot start the frame renderer: the frames page did not connect within ${START_MS / 1000} s`)), START_MS);
        this.sockets.once('connection', (socket) => {
          clearTimeout(timer);
          done(socket);
        });
      });
      const { port } = this.server.address() as AddressInfo;
      await page.goto(`http://127.0.0.1:${port}/frames/index.html?socket=/${this.token}`);
      const socket = await connected;
      // Run in the page: its document is not this program's (the build compiles without the DOM's types).
      const webgl = await page.evaluate(() => !!(globalThis as unknown as { document: { createElement(tag: 'canvas'): { getContext(kind: string): unknown } } }).document.createElement('canvas').getContext('webgl2'));
      if (!webgl) throw new FrameRendererError(`cannot start the frame renderer: this Chromium has no WebGL 2 (software WebGL is needed); ${CHROMIUM_HELP}`);
      const session: Session = { browser, pid: launched.process.pid, closeBrowser: launched.close, page, socket };
      socket.on('message', (data: Buffer, binary: boolean) => this.answer(data, binary));
      socket.on('close', () => void this.endSession(new SessionLost('the frames page closed its connection')));
      page.on('crash', () => void this.endSession(new SessionLost('the frames page crashed')));
      browser.on('disconnected', () => void this.endSession(new SessionLost('the browser exited')));
      this.session = session;
      return session;
    } catch (error) {
      await launched.close().catch(() => undefined);
      throw error instanceof FrameRendererError ? error : new FrameRendererError(`cannot start the frame renderer: ${firstLine(error)}`);
    }
  }

  private answer(data: Buffer, binary: boolean): void {
    if (!binary) {
      const { id, error } = JSON.parse(data.toString('utf8')) as { id: number; error: string };
      this.settle(id, (pending) => pending.reject(new FrameRendererError(`the frames page could not draw the frame: ${error}`)));
      return;
    }
    this.settle(data.readUInt32LE(0), (pending) => pending.resolve(data.subarray(4)));
  }

  private settle(id: number, how: (pending: Pending) => void): void {
    const pending = this.pending.get(id);
    if (!pending) return;
    this.pending.delete(id);
    clearTimeout(pending.timer);
    how(pending);
  }

  private async endSession(reason: SessionLost): Promise<void> {
    const session = this.session;
    if (!session) return;
    this.session = null;
    this.failPending(reason);
    session.socket.terminate();
    await session.closeBrowser().catch(() => undefined);
  }

  private failPending(error: Error): void {
    for (const [id, pending] of this.pending) {
      clearTimeout(pending.timer);
      this.pending.delete(id);
      pending.reject(error);
    }
  }
}

/** The browser or the page went away under a frame: worth one more try in a new one. */
class SessionLost extends Error {}

/** Serves the built page and its scripts, and nothing outside `root`. */
function serveFile(root: string, url: string, response: import('node:http').ServerResponse): void {
  let path: string;
  try {
    path = normalize(join(root, decodeURIComponent(url.split('?')[0])));
  } catch {
    response.writeHead(400).end();
    return;
  }
  const type = CONTENT_TYPES[extname(path)];
  if (!path.startsWith(root + '/') || !type || !existsSync(path)) {
    response.writeHead(404).end();
    return;
  }
  response.writeHead(200, { 'content-type': type }).end(readFileSync(path));
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0].trim();
}
