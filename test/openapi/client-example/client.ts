/**
 * A small client written against the types openapi-typescript generates from /openapi.json
 * (./api-types.ts, written by test/openapi/openapi.test.ts before it type-checks this file).
 * It shows what a user of the service would write, and fails to compile if the document lies.
 */
import type { components, paths } from './api-types.js';

type Variant = components['schemas']['Variant'];
type Problem = components['schemas']['Problem'];
type NewVariant = paths['/api/variants']['post']['requestBody']['content']['application/json'];
type VariantPage = paths['/api/variants']['get']['responses'][200]['content']['application/json'];
type VariantQuery = NonNullable<paths['/api/variants']['get']['parameters']['query']>;
type Patch = paths['/api/variants/{id}']['patch']['requestBody']['content']['application/json'];
type Role = components['schemas']['User']['role'];

export class ProblemError extends Error {
  constructor(readonly problem: Problem) {
    super(`${problem.code}: ${problem.detail}`);
  }
}

async function call<T>(baseUrl: string, token: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ body: T; etag: string | null }> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!response.ok) throw new ProblemError((await response.json()) as Problem);
  return { body: (await response.json()) as T, etag: response.headers.get('etag') };
}

export async function createVariant(baseUrl: string, token: string, variant: NewVariant): Promise<Variant> {
  return (await call<Variant>(baseUrl, token, 'POST', '/api/variants', variant)).body;
}

export async function searchVariants(baseUrl: string, token: string, query: VariantQuery): Promise<VariantPage> {
  const search = new URLSearchParams(Object.entries(query).map(([name, value]) => [name, String(value)]));
  return (await call<VariantPage>(baseUrl, token, 'GET', `/api/variants?${search}`)).body;
}

/** Reads the variant, then changes its price only if nobody changed it since (If-Match). */
export async function reprice(baseUrl: string, token: string, id: string, price: number): Promise<Variant> {
  const current = await call<Variant>(baseUrl, token, 'GET', `/api/variants/${id}`);
  const patch: Patch = { price };
  return (await call<Variant>(baseUrl, token, 'PATCH', `/api/variants/${id}`, patch, { 'if-match': current.etag ?? '*' })).body;
}

export const STAFF_ROLES: Role[] = ['manager', 'admin'];
