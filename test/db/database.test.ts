import assert from 'node:assert/strict';
import { chmod, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { openDatabase } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';

async function modesUnder(directory: string): Promise<{ path: string; mode: number; directory: boolean }[]> {
  const found = [{ path: directory, mode: (await stat(directory)).mode & 0o777, directory: true }];
  for (const entry of await readdir(directory, { withFileTypes: true })) {
    const entryPath = path.join(directory, entry.name);
    if (entry.isDirectory()) found.push(...(await modesUnder(entryPath)));
    else if (entry.isFile()) found.push({ path: entryPath, mode: (await stat(entryPath)).mode & 0o777, directory: false });
  }
  return found;
}

describe('the embedded database on disk', () => {
  it('gives group and others no permission on DATA_DIR or any file in it, also files an older version left open', async () => {
    const parent = await mkdtemp(path.join(tmpdir(), 'data-modes-'));
    const dataDir = path.join(parent, 'data');
    try {
      const first = await openDatabase({ dataDir });
      await migrateToLatest(first.db);
      await first.close();
      const afterFirst = await modesUnder(dataDir);
      assert.ok(afterFirst.length > 10, 'PGlite wrote its files');
      for (const entry of afterFirst) assert.equal(entry.mode & 0o077, 0, `${entry.path} is ${entry.mode.toString(8)}`);

      const loose = afterFirst.find((entry) => !entry.directory)!;
      await chmod(loose.path, 0o666);
      await chmod(dataDir, 0o777);
      const second = await openDatabase({ dataDir });
      await second.close();
      for (const entry of await modesUnder(dataDir)) {
        assert.equal(entry.mode & 0o077, 0, `${entry.path} is ${entry.mode.toString(8)} after a restart`);
      }
    } finally {
      await rm(parent, { recursive: true, force: true });
    }
  });
});
