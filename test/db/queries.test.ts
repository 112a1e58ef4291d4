import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from 'node:test';
import { queryFiles } from '../../scripts/query-files.js';

describe('queries/: the SQL of the admission, committed', () => {
  it('is what the code builds now (run `npm run queries` after changing a query)', async () => {
    const directory = path.resolve(import.meta.dirname, '..', '..', 'queries');
    const expected = queryFiles();
    assert.deepEqual((await readdir(directory)).sort(), Object.keys(expected).sort());
    for (const [name, text] of Object.entries(expected)) assert.equal(await readFile(path.join(directory, name), 'utf8'), text, name);
  });
});
