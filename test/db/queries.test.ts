import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { queryFiles } from '../../scripts/query-files.js';
import { REPOSITORIES_BY_ANOTHER_NAME, REPOSITORY_FILES } from '../../scripts/query-registry/index.js';

const root = path.resolve(import.meta.dirname, '..', '..');
const HINT = 'run `npm run queries` and commit queries/';

/** Every repository file, as the registry names them: each src/**\/*-repository.ts, and those by another name. */
async function repositoryFiles(): Promise<string[]> {
  const names = await readdir(path.join(root, 'src'), { recursive: true });
  const byName = names.filter((name) => name.endsWith('-repository.ts')).map((name) => path.posix.join('src', ...name.split(path.sep)));
  return [...byName, ...REPOSITORIES_BY_ANOTHER_NAME].sort();
}

/** Where two texts first differ, line by line, or undefined when they are the same. */
function firstDifference(expected: string, actual: string): string | undefined {
  const want = expected.split('\n');
  const have = actual.split('\n');
  for (let line = 0; line < Math.max(want.length, have.length); line++) {
    if (want[line] !== have[line]) return `line ${line + 1}: the code sends ${JSON.stringify(want[line] ?? '(end of file)')}, the file has ${JSON.stringify(have[line] ?? '(end of file)')}`;
  }
  return undefined;
}

describe('queries/: the SQL of every repository function, committed', () => {
  it('has an entry in scripts/query-registry/ for every export of every repository file, and none for an export that is gone', async () => {
    const problems: string[] = [];
    const registered = new Map(REPOSITORY_FILES.map((repository) => [repository.file, repository.entries]));
    for (const file of await repositoryFiles()) {
      // The module's run-time exports: its functions and constants (its types leave nothing to check).
      const module: Record<string, unknown> = await import(pathToFileURL(path.join(root, file)).href);
      const exported = Object.keys(module);
      const entries = registered.get(file) ?? {};
      for (const name of exported) {
        const entry = entries[name];
        if (!entry) problems.push(`${file}: ${name} is exported but not in scripts/query-registry/ (add a sample call, or notSql with its reason)`);
        else if ('calls' in entry && entry.calls !== undefined && entry.calls !== module[name]) problems.push(`${file}: the entry ${name} calls another export`);
        else if ('notSql' in entry && entry.notSql === 'constant' && typeof module[name] === 'function') problems.push(`${file}: ${name} is a function, not a constant: give it a sample call`);
      }
      for (const name of Object.keys(entries)) {
        if (!exported.includes(name)) problems.push(`${file}: ${name} is in scripts/query-registry/ but not exported`);
      }
      registered.delete(file);
    }
    for (const file of registered.keys()) problems.push(`${file} is in scripts/query-registry/ but is not a repository file`);
    assert.deepEqual(problems, []);
  });

  it('is what the code sends now', async () => {
    const directory = path.join(root, 'queries');
    const expected = await queryFiles();
    const committed = (await readdir(directory)).filter((name) => name.endsWith('.sql')).sort();
    assert.deepEqual(committed, Object.keys(expected).sort(), `the files of queries/ are not those the registry's areas make: ${HINT}`);
    for (const [name, text] of Object.entries(expected)) {
      // A sample the database refuses shows nothing true of its function: its values are wrong.
      assert.doesNotMatch(text, /^-- fails here:/m, `a sample of queries/${name} is refused by the database: fix its values in scripts/query-registry/`);
      const difference = firstDifference(text, await readFile(path.join(directory, name), 'utf8'));
      if (difference) assert.fail(`queries/${name} differs from the code at ${difference}: ${HINT}`);
    }
  });
});
