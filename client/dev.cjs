#!/usr/bin/env node
/**
 * `npm run dev`: the game server (port 2567, as `npm start`) and Vite's dev server (port 5173,
 * with hot reload) side by side. Vite forwards matchmaking, the rooms and the API to the game
 * server (client/vite.config.ts). Ctrl-C stops both.
 */
const { spawn } = require('node:child_process');
const { join } = require('node:path');

const root = join(__dirname, '..');
const children = [
  spawn(process.execPath, [join(root, 'bin/cerealbar.cjs'), 'serve', ...process.argv.slice(2)], { cwd: root, stdio: 'inherit' }),
  spawn(process.execPath, [join(root, 'node_modules/vite/bin/vite.js'), 'client'], { cwd: root, stdio: 'inherit' }),
];
let stopping = false;
function stop(code) {
  if (stopping) return;
  stopping = true;
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
  process.exitCode = code;
}
for (const child of children) child.on('exit', (code) => stop(code ?? 0));
process.on('SIGINT', () => stop(0));
process.on('SIGTERM', () => stop(0));
