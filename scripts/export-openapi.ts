/**
 * `npm run openapi`: writes the client types generated from the OpenAPI document with
 * openapi-typescript (client/api-types.ts, and client/api-limits.ts with the lengths forms state, which client/ and the console use; a test fails when
 * it is out of date), and the document itself for linters such as `npx @redocly/cli lint`
 * (./openapi.json, not committed: /openapi.json on a running service is the same).
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { clientLimitsFor, clientTypesFor, currentOpenApiDocument } from '../test/helpers/openapi-document.js';

const root = path.resolve(import.meta.dirname, '..');
const documentPath = process.argv[2] ?? path.join(root, 'openapi.json');
const document = await currentOpenApiDocument();
await writeFile(documentPath, `${JSON.stringify(document, null, 2)}\n`);
await writeFile(path.join(root, 'client', 'api-types.ts'), await clientTypesFor(document));
await writeFile(path.join(root, 'client', 'api-limits.ts'), clientLimitsFor(document));
console.log(`wrote client/api-types.ts, client/api-limits.ts and ${path.relative(root, documentPath)}`);
