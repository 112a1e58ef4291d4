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

/**
 * client/api-limits.ts: the lengths the document states for fields a form tells its user about
 * before sending (openapi-typescript's types carry no lengths), so the console copies no server rule.
 */
export function clientLimitsFor(document: Record<string, unknown>): string {
  const paths = document.paths as Record<string, Record<string, { requestBody: { content: Record<string, { schema: { properties: Record<string, { minLength: number; maxLength: number }> } }> } }>>;
  const newPassword = paths['/api/users/change-password']!.put!.requestBody.content['application/json']!.schema.properties.new_password!;
  return [
    '// Written by `npm run openapi` from /openapi.json: do not edit (a test fails when it is stale).',
    '',
    '/** A new password\'s length in characters (change-password, password-reset confirm). */',
    `export const newPasswordLength = { min: ${newPassword.minLength}, max: ${newPassword.maxLength} } as const;`,
    '',
  ].join('\n');
}
