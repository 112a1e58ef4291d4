import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript';
import { buildTestApp } from './test-app.js';

/** The service's OpenAPI document, as an app built from the source serves it. */
export async function currentOpenApiDocument(): Promise<Record<string, unknown>> {
  const testApp = await buildTestApp({ environment: { PUBLIC_URL: 'http://127.0.0.1:3000' } });
  try {
    return (await testApp.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  } finally {
    await testApp.close();
  }
}

/**
 * TypeScript types for the document, as `openapi-typescript` generates them for client/api-types.ts;
 * `enumValues` adds each closed set as an array too (`userRoleValues`), so a caller lists roles without copying them.
 */
export async function clientTypesFor(document: Record<string, unknown>): Promise<string> {
  const ast = await openapiTS(document as never, { enumValues: true });
  return `${COMMENT_HEADER}${astToString(ast)}`;
}
