/** `npm run queries`: writes queries/*.sql from the code (see query-files.ts). */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { queryFiles } from './query-files.js';

const directory = path.resolve(import.meta.dirname, '..', 'queries');
await mkdir(directory, { recursive: true });
for (const [name, text] of Object.entries(queryFiles())) {
  await writeFile(path.join(directory, name), text);
  console.log(`wrote queries/${name}`);
}
