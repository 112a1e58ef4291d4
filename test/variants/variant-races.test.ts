import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, loginAdmin, onPostgres, type Session, type TestApp } from '../helpers/test-app.js';

describe('variant races (PostgreSQL)', { skip: !onPostgres && 'needs PostgreSQL' }, () => {
  let testApp: TestApp;
  let admin: Session;

  before(async () => {
    testApp = await buildTestApp();
    admin = await loginAdmin(testApp.app);
  });
  after(() => testApp?.close());

  const createAll = (payloads: { id: string; body: object }[]) =>
    Promise.all(
      payloads.map(({ id, body }) => testApp.app.inject({ method: 'POST', url: `/api/variants/${id}`, headers: admin.auth, payload: body })),
    );
  const count = async (column: 'sku' | 'product_id', value: string) =>
    (await testApp.db.selectFrom('variants').select('id').where(column, 'ilike', value).execute()).length;

  it('lets exactly one of 20 concurrent creates with one SKU (in mixed case) through', async () => {
    const sku = `race-${randomUUID().slice(0, 8)}`;
    const responses = await createAll(
      Array.from({ length: 20 }, (_, index) => ({
        id: randomUUID(),
        body: { product_id: `p-${index}`, sku: index % 2 ? sku.toUpperCase() : sku, name: 'Race', price: 1 },
      })),
    );
    const statuses = responses.map((response) => response.statusCode);
    assert.equal(statuses.filter((status) => status === 201).length, 1, String(statuses));
    assert.ok(responses.filter((response) => response.statusCode !== 201).every((response) => response.json().code === 'sku_taken'));
    assert.equal(await count('sku', sku), 1);
  });

  it('lets exactly one of 20 concurrent creates with equal attributes on one product through', async () => {
    const product = `race-${randomUUID().slice(0, 8)}`;
    const responses = await createAll(
      Array.from({ length: 20 }, (_, index) => ({
        id: randomUUID(),
        body: { product_id: product, sku: `${product}-${index}`, name: 'Race', price: 1, attributes: { size: 'M' } },
      })),
    );
    const statuses = responses.map((response) => response.statusCode);
    assert.equal(statuses.filter((status) => status === 201).length, 1, String(statuses));
    assert.ok(responses.filter((response) => response.statusCode !== 201).every((response) => response.json().code === 'duplicate_attributes'));
    assert.equal(await count('product_id', product), 1);
  });

  it('lets exactly one of 20 concurrent creates with one id through', async () => {
    const id = randomUUID();
    const responses = await createAll(
      Array.from({ length: 20 }, (_, index) => ({
        id,
        body: { product_id: `p-${randomUUID()}`, sku: `id-race-${randomUUID().slice(0, 8)}-${index}`, name: 'Race', price: 1 },
      })),
    );
    const statuses = responses.map((response) => response.statusCode);
    assert.equal(statuses.filter((status) => status === 201).length, 1, String(statuses));
    assert.ok(responses.filter((response) => response.statusCode !== 201).every((response) => response.json().code === 'variant_exists'));
  });
});
