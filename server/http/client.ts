/**
 * Serves the built browser client (client/dist): the lobby and game at /, the replay viewer at
 * /replay/. Without a build, every page says how to make one instead of failing silently.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import express from 'express';

export const CLIENT_DIST = resolve(__dirname, '../../client/dist');

export function mountClient(app: express.Application, dist = CLIENT_DIST): { built: boolean } {
  const built = existsSync(join(dist, 'index.html'));
  if (!built) {
    app.get(['/', '/replay', '/replay/'], (_req, res) => {
      res.status(503).type('text/plain').send('The browser client is not built. Run "npm run build:client" (npm start does it for you), then reload.');
    });
    return { built };
  }
  // Bundles carry a content hash in their names, so they may be cached for good; pages may not.
  app.use('/assets', express.static(join(dist, 'assets'), { immutable: true, maxAge: '1y' }));
  app.use(express.static(dist, { index: 'index.html', redirect: true, setHeaders: (res) => res.setHeader('Cache-Control', 'no-cache') }));
  return { built };
}
