/**
 * Where the built browser client is (`npm run build:client` writes client/dist): the game server
 * serves its pages, the frame renderer loads its frames page. CEREALBAR_CLIENT_DIST names a build
 * made elsewhere (vite build --outDir DIR), for example one per test run.
 */
import { resolve } from 'node:path';

export const CLIENT_DIST = process.env.CEREALBAR_CLIENT_DIST ? resolve(process.env.CEREALBAR_CLIENT_DIST) : resolve(__dirname, '../../../client/dist');
