/** Serving the browser client: the built pages, and a clear answer when there is no build. */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import { mountClient } from '../../server/http/client';

async function serve(dist: string): Promise<{ url: string; built: boolean; server: Server }> {
  const app = express();
  const { built } = mountClient(app, dist);
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, built, server };
}

test('without a build every page says how to make one', async () => {
  const { url, built, server } = await serve(mkdtempSync(join(tmpdir(), 'cerealbar-nodist-')));
  try {
    expect(built).toBe(false);
    for (const path of ['/', '/replay', '/replay/', '/study/pilot-1', '/study/pilot-1/']) {
      const response = await fetch(`${url}${path}`);
      expect(response.status).toBe(503);
      expect(await response.text()).toContain('npm run build:client');
    }
  } finally {
    server.close();
  }
});

test('a build is served: pages never cached, hashed assets cached for good, a missing asset is a 404', async () => {
  const dist = mkdtempSync(join(tmpdir(), 'cerealbar-dist-'));
  mkdirSync(join(dist, 'assets'));
  mkdirSync(join(dist, 'replay'));
  mkdirSync(join(dist, 'study'));
  writeFileSync(join(dist, 'index.html'), '<title>game</title>');
  writeFileSync(join(dist, 'replay', 'index.html'), '<title>replay</title>');
  writeFileSync(join(dist, 'study', 'index.html'), '<title>study</title>');
  writeFileSync(join(dist, 'assets', 'game-abc123.js'), 'console.log(1)');
  const { url, built, server } = await serve(dist);
  try {
    expect(built).toBe(true);
    const page = await fetch(`${url}/`);
    expect(await page.text()).toBe('<title>game</title>');
    expect(page.headers.get('cache-control')).toBe('no-cache');
    expect(await (await fetch(`${url}/replay/`)).text()).toBe('<title>replay</title>');
    // Every study's address is the one study page, which reads the id from it.
    for (const path of ['/study/pilot-1', '/study/pilot-1/', '/study/other?PROLIFIC_PID=P&STUDY_ID=S&SESSION_ID=X']) {
      const study = await fetch(`${url}${path}`);
      expect(study.status).toBe(200);
      expect(await study.text()).toBe('<title>study</title>');
      expect(study.headers.get('cache-control')).toBe('no-cache');
    }
    expect((await fetch(`${url}/study/a/b`)).status).toBe(404);
    const asset = await fetch(`${url}/assets/game-abc123.js`);
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect((await fetch(`${url}/assets/missing.js`)).status).toBe(404);
  } finally {
    server.close();
  }
});
