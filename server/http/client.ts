/**
 * Serves the built browser client (client/dist): the lobby and game at /, the replay viewer at
 * /replay/, a study's participant page at /study/<id> (one page for every study: it reads the id
 * from its address), the researcher's admin page at /admin/. Without a build, every page says how to make one instead of failing silently.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import express from 'express';
import { CLIENT_DIST } from '../../shared/frames/node/clientDist';

/** A study's page: /study/<id>, with or without the final slash. */
const STUDY_PAGE_ROUTES = ['/study/:id', '/study/:id/'];

export function mountClient(app: express.Application, dist = CLIENT_DIST): { built: boolean } {
  const built = existsSync(join(dist, 'index.html'));
  if (!built) {
    app.get(['/', '/replay', '/replay/', '/admin', '/admin/', ...STUDY_PAGE_ROUTES], (_req, res) => {
      res.status(503).type('text/plain').send('The browser client is not built. Run "npm run build:client" (npm start does it for you), then reload.');
    });
    return { built };
  }
  // Bundles carry a content hash in their names, so they may be cached for good; pages may not.
  app.use('/assets', express.static(join(dist, 'assets'), { immutable: true, maxAge: '1y' }));
  app.get(STUDY_PAGE_ROUTES, (_req, res) => {
    res.setHeader('Cache-Control', 'no-cache');
    res.sendFile(join(dist, 'study', 'index.html'));
  });
  app.use(express.static(dist, { index: 'index.html', redirect: true, setHeaders: (res) => res.setHeader('Cache-Control', 'no-cache') }));
  return { built };
}
