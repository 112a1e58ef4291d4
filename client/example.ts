/**
 * What a TypeScript caller of the service writes with ./shop-client.ts: create a variant, find it,
 * and change its price only if nobody changed it since it was read. test/openapi/openapi.test.ts
 * runs it against a live service, and the project's type-check compiles it against ./api-types.ts,
 * so it fails when the OpenAPI document and the service disagree with it.
 *
 *   const client = createShopClient({ baseUrl: 'http://127.0.0.1:3000', accessToken: () => token });
 *   const variant = await createVariant(client, { product_id: 'shirt-1', sku: 'SHIRT-1-L', name: 'Shirt, L', price: 1999 });
 */
import { reply, type Schemas, type ShopClient } from './shop-client.js';
import type { paths } from './api-types.js';

type NewVariant = paths['/api/variants']['post']['requestBody']['content']['application/json'];
type VariantQuery = NonNullable<paths['/api/variants']['get']['parameters']['query']>;

export async function createVariant(client: ShopClient, variant: NewVariant): Promise<Schemas['Variant']> {
  return (await reply(client.POST('/api/variants', { body: variant }))).body;
}

export async function searchVariants(client: ShopClient, query: VariantQuery) {
  return (await reply(client.GET('/api/variants', { params: { query } }))).body;
}

/** Reads the variant, then changes its price with If-Match: a 412 means someone else was quicker. */
export async function reprice(client: ShopClient, id: string, price: number): Promise<Schemas['Variant']> {
  const current = await reply(client.GET('/api/variants/{id}', { params: { path: { id } } }));
  if (!current.etag) throw new Error('a variant is always read with its ETag');
  const changed = client.PATCH('/api/variants/{id}', { params: { path: { id }, header: { 'if-match': current.etag } }, body: { price } });
  return (await reply(changed)).body;
}
