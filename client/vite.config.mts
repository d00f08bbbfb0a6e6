/**
 * The browser client: four pages (the lobby with the game, the replay viewer, a study's
 * participant page and the researcher's admin page), and the frames page that draws frames for
 * models headless (shared/frames/node/renderer.ts), built into client/dist, which the game server serves. In development
 * (`npm run dev`) Vite serves them and forwards matchmaking, the rooms' websockets and the HTTP
 * API to the game server.
 */
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vite';

const here = dirname(fileURLToPath(import.meta.url));
const GAME_SERVER = process.env.CEREALBAR_SERVER ?? 'http://localhost:2567';

/** A study's page answers every /study/<id>, as the game server does (server/http/client.ts). */
const studyPages: Plugin = {
  name: 'study-pages',
  configureServer(server) {
    server.middlewares.use((req, _res, next) => {
      const match = req.url?.match(/^\/study\/[^/?.]+\/?(\?.*)?$/);
      if (match) req.url = `/study/index.html${match[1] ?? ''}`;
      next();
    });
  },
};

export default defineConfig({
  root: here,
  plugins: [studyPages],
  // No assets are fetched at run time except the page's own bundle.
  publicDir: false,
  build: {
    outDir: resolve(here, 'dist'),
    emptyOutDir: true,
    // three alone is about 600 kB minified (150 kB gzipped); docs/benchmarks.md tracks the sizes.
    chunkSizeWarningLimit: 800,
    rollupOptions: {
      input: { game: resolve(here, 'index.html'), replay: resolve(here, 'replay/index.html'), study: resolve(here, 'study/index.html'), admin: resolve(here, 'admin/index.html'), frames: resolve(here, 'frames/index.html') },
    },
  },
  server: {
    port: 5173,
    proxy: {
      '/matchmake': GAME_SERVER,
      '/api': GAME_SERVER,
      '/healthz': GAME_SERVER,
      // A room's websocket: /<processId>/<roomId>?sessionId=...
      '^/[\\w-]+/[\\w-]+\\?sessionId=': { target: GAME_SERVER, ws: true },
    },
  },
});
