/**
 * The environment server's entry point: what `npm run build:python` bundles into the Python
 * package. It serves environments on stdin and stdout until stdin closes.
 */
import { readFileSync } from 'node:fs';
import { loadRecording } from '../../eval/recording';
import { EnvServer } from '../server';
import { openBlockFile } from './blockFile';
import { serveStdio } from './stdio';

const server = new EnvServer((path) => loadRecording(readFileSync(path, 'utf8')), openBlockFile);
serveStdio((request) => server.handle(request));
