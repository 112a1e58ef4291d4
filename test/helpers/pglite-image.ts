import { createHash, randomBytes } from 'node:crypto';
import { readFile, readdir, rename, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { Kysely } from 'kysely';
import { PGliteDialect } from '../../src/db/pglite-dialect.js';
import { migrateToLatest } from '../../src/db/migrate.js';

let image: Promise<Blob> | undefined;

/**
 * An image of an embedded database with every migration applied, for test apps to start from:
 * an empty PGlite cluster takes about 2 s to create, loading this image about 0.5 s, and test
 * files build over a hundred apps. The image is made by running the real migrations, and is
 * kept in the system's temporary folder under a hash of the migrations and PGlite's version,
 * so parallel test files share it and a changed migration makes a new one.
 */
export function migratedPGliteImage(): Promise<Blob> {
  image ??= loadOrMake();
  return image;
}

async function loadOrMake(): Promise<Blob> {
  const file = path.join(tmpdir(), `shop-test-pglite-${await sourceHash()}.tar`);
  try {
    return new Blob([await readFile(file)]);
  } catch {
    const made = await make();
    // Written aside and renamed: a file running at the same time reads the whole image or none.
    // Keeping it is only a saving: a folder that refuses it (full, another user's file) fails nothing.
    const partial = `${file}.${randomBytes(6).toString('hex')}`;
    await writeFile(partial, Buffer.from(await made.arrayBuffer()))
      .then(() => rename(partial, file))
      .catch(() => unlink(partial).catch(() => undefined));
    return made;
  }
}

async function make(): Promise<Blob> {
  const pglite = new PGlite();
  await pglite.waitReady;
  const db = new Kysely<any>({ dialect: new PGliteDialect(pglite) });
  try {
    await migrateToLatest(db);
    return await pglite.dumpDataDir('none');
  } finally {
    await db.destroy();
  }
}

async function sourceHash(): Promise<string> {
  const hash = createHash('sha256');
  const source = (relative: string) => fileURLToPath(new URL(relative, import.meta.url));
  const migrations = source('../../src/db/migrations');
  for (const name of (await readdir(migrations)).sort()) hash.update(name).update(await readFile(path.join(migrations, name)));
  hash.update(await readFile(source('../../src/db/migrate.ts')));
  hash.update(JSON.parse(await readFile(source('../../node_modules/@electric-sql/pglite/package.json'), 'utf8')).version);
  return hash.digest('hex').slice(0, 16);
}
