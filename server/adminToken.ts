/**
 * The admin token (P-63): ADMIN_TOKEN when it is set, else the one kept in the data directory's
 * `admin-token` file, made at the first start and readable by its owner only. A restart, or
 * another process sharing the data directory, uses the same token, so the researcher's pages (the
 * replay viewer, the admin page) and scripts keep working.
 */
import { createHash, randomBytes } from 'node:crypto';
import { linkSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeOwnerOnlyDir } from './store/ownerOnly';

export const MIN_ADMIN_TOKEN_LENGTH = 16;
export const ADMIN_TOKEN_FILE = 'admin-token';

export interface AdminToken {
  readonly token: string;
  /** `env`: ADMIN_TOKEN; `file`: the data directory's file, as made before; `made`: that file, made now. */
  readonly source: 'env' | 'file' | 'made';
  /** The file the token is kept in (absent for ADMIN_TOKEN). */
  readonly file?: string;
}

export function resolveAdminToken(env: NodeJS.ProcessEnv, dataDir: string): AdminToken {
  const given = env.ADMIN_TOKEN;
  if (given !== undefined) {
    checkToken(given, 'ADMIN_TOKEN', 'unset it to have one kept in the data directory');
    return { token: given, source: 'env' };
  }
  const file = join(dataDir, ADMIN_TOKEN_FILE);
  const made = makeTokenFile(dataDir, file);
  // Group or others could read the token: refused, as ssh refuses a private key anyone can read.
  const mode = statSync(file).mode & 0o777;
  if (process.platform !== 'win32' && (mode & 0o077) !== 0) {
    throw new Error(`${file} can be read by others (mode ${mode.toString(8)}): make it its owner's only (chmod 600 ${file}), or set ADMIN_TOKEN`);
  }
  const token = readFileSync(file, 'utf8').trim();
  checkToken(token, `the admin token in ${file}`, 'delete the file to have a new one made');
  return { token, source: made ? 'made' : 'file', file };
}

/**
 * Writes a new random token to `file` unless it exists; true when this call made it. The token is
 * written to a file of this process's own and linked into place, so a process sharing the data
 * directory never reads a half-written token, and of two starting at once one token wins.
 */
function makeTokenFile(dataDir: string, file: string): boolean {
  const draft = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  try {
    makeOwnerOnlyDir(dataDir);
    writeFileSync(draft, `${randomBytes(32).toString('base64url')}\n`, { mode: 0o600 });
  } catch (error) {
    throw new Error(`${file}: cannot keep the admin token: ${(error as Error).message}`);
  }
  try {
    linkSync(draft, file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw new Error(`${file}: cannot keep the admin token: ${(error as Error).message}`);
  } finally {
    unlinkSync(draft);
  }
}

/** What `serve` prints of a token it did not just make: the first 8 hex digits of its SHA-256, enough to tell tokens apart and nothing to sign in with. */
export function adminTokenFingerprint(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex').slice(0, 8);
}

function checkToken(token: string, from: string, remedy: string): void {
  if (token.length < MIN_ADMIN_TOKEN_LENGTH) {
    throw new Error(`${from} must be at least ${MIN_ADMIN_TOKEN_LENGTH} characters long (it has ${token.length}); ${remedy}`);
  }
  // A token with spaces or control characters could never be sent in an Authorization header.
  if (!/^[\x21-\x7e]+$/.test(token)) throw new Error(`${from} must consist of visible ASCII characters only (no spaces)`);
}
