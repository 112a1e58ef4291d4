import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { createUser, loginAdmin } from '../helpers/test-app.js';
import type { FuzzTargets } from './fuzz-requests.js';

/** Seeds a few users and variants so generated requests hit real rows as well as missing ones. */
export async function seedFuzzTargets(app: FastifyInstance): Promise<FuzzTargets> {
  const admin = await loginAdmin(app);
  const manager = await createUser(app, { role: 'manager', admin });
  const user = await createUser(app);
  const variantIds: string[] = [];
  const skus: string[] = [];
  for (let index = 0; index < 3; index++) {
    const id = randomUUID();
    const sku = `FUZZ-${index}-${id.slice(0, 6)}`;
    await app.inject({
      method: 'POST',
      url: `/api/variants/${id}`,
      headers: admin.auth,
      payload: { product_id: 'fuzz-product', sku, name: 'Fuzz', price: 100, attributes: { n: String(index) } },
    });
    variantIds.push(id);
    skus.push(sku);
  }
  const storefront = await app.inject({
    method: 'POST',
    url: '/api/clients',
    headers: admin.auth,
    payload: { name: 'Fuzz storefront', type: 'public', first_party: true, redirect_uris: ['https://fuzz.example.com/callback'], scopes: ['openid', 'email', 'profile', 'offline_access'] },
  });
  const locations = await app.inject({ method: 'GET', url: '/api/locations', headers: admin.auth });
  return {
    app: { id: storefront.json().id, redirectUri: 'https://fuzz.example.com/callback' },
    locationIds: locations.json().items.map((location: { id: string }) => location.id),
    userIds: [admin.id, manager.id, user.id],
    variantIds,
    skus,
    tokens: [admin.accessToken, manager.accessToken, user.accessToken],
  };
}
