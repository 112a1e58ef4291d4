/** `npm run queries`: writes queries/*.sql from the code (see query-files.ts), and removes an area's file that is no longer written. */
import { mkdir, readdir, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { queryFiles } from './query-files.js';

const directory = path.resolve(import.meta.dirname, '..', 'queries');
await mkdir(directory, { recursive: true });
const files = await queryFiles();
for (const [name, text] of Object.entries(files)) {
  await writeFile(path.join(directory, name), text);
  console.log(`wrote queries/${name}`);
}
for (const name of await readdir(directory)) {
  if (name.endsWith('.sql') && !(name in files)) {
    await unlink(path.join(directory, name));
    console.log(`removed queries/${name}`);
  }
}
