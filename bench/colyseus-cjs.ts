/**
 * Makes every require() of a @colyseus package load its CommonJS build. Import this before the
 * server when running the compiled (CommonJS) server with plain node.
 *
 * Why: on Node >= 20.19 require() may load ES modules, and @colyseus/ws-transport's exports map
 * lists a "module-sync" condition before "require", so `require('@colyseus/ws-transport')` loads
 * build/index.mjs, which imports @colyseus/core's ES build, while dist/server requires
 * @colyseus/core's CommonJS build (core has no "module-sync"). Two copies of the matchmaker: the
 * transport looks for rooms in the one that has none, and every join fails with "seat
 * reservation expired" (close code 4002). tsx (which `npm start` uses) does not hit this.
 */
import { existsSync } from 'node:fs';
import Module from 'node:module';

type Resolve = (request: string, parent: unknown, isMain: boolean, options?: unknown) => string;
const moduleWithResolve = Module as unknown as { _resolveFilename: Resolve };
const resolveFilename = moduleWithResolve._resolveFilename;

moduleWithResolve._resolveFilename = function (this: unknown, request, parent, isMain, options) {
  const resolved = resolveFilename.call(this, request, parent, isMain, options);
  if (request.startsWith('@colyseus/') && resolved.endsWith('.mjs')) {
    const cjs = `${resolved.slice(0, -'.mjs'.length)}.cjs`;
    if (existsSync(cjs)) return cjs;
  }
  return resolved;
};
