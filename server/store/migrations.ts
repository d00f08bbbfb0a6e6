/**
 * A SQLite file's schema as a list of migrations, the first of which makes it. SQLite's
 * user_version counts the migrations a file has had, so each runs once per file; the check and
 * the migrations are one IMMEDIATE transaction, so two processes opening a file together never
 * both run one; and a file of a newer version of cerealbar is refused rather than misread.
 */
import type Database from 'better-sqlite3';
import { schemaTransaction } from './sqliteFile';

/** SQL; or a function, for what SQL alone cannot say (a column added only where it is missing). */
export type Migration = string | ((db: Database.Database) => void);

/** How many migrations the file has had. */
export function schemaVersion(db: Database.Database): number {
  return db.pragma('user_version', { simple: true }) as number;
}

/** Runs the migrations the file `db` has not had yet. */
export function migrate(db: Database.Database, migrations: readonly Migration[]): void {
  schemaTransaction(db, () => {
    const version = schemaVersion(db);
    if (version > migrations.length) throw new Error(`${db.name} has schema version ${version}, newer than this version of cerealbar (${migrations.length})`);
    for (const migration of migrations.slice(version)) {
      if (typeof migration === 'string') db.exec(migration);
      else migration(db);
    }
    if (version !== migrations.length) db.pragma(`user_version = ${migrations.length}`);
  });
}
