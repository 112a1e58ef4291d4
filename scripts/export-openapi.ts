/**
 * `npm run openapi`: writes the OpenAPI document (openapi.json, for linters such as
 * `npx @redocly/cli lint openapi.json`) and the client types generated from it with
 * openapi-typescript (test/openapi/api-types.ts, which test/openapi/client-example.ts uses and
 * npm test type-checks; test/openapi/openapi.test.ts fails when they are out of date).
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { clientTypesFor, currentOpenApiDocument } from '../test/helpers/openapi-document.js';

const root = path.resolve(import.meta.dirname, '..');
const documentPath = process.argv[2] ?? path.join(root, 'openapi.json');
const document = await currentOpenApiDocument();
await writeFile(documentPath, `${JSON.stringify(document, null, 2)}\n`);
await writeFile(path.join(root, 'test', 'openapi', 'api-types.ts'), await clientTypesFor(document));
console.log(`wrote ${path.relative(root, documentPath)} and test/openapi/api-types.ts`);
