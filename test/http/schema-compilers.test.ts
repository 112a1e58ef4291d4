import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildSerializerCompiler } from '../../src/http/response-serializers.js';
import { buildValidatorCompiler } from '../../src/http/validation.js';

/** The compiled validators and serializers are shared between apps of one process (the cost an app build no longer pays). */
describe('schema compilers', () => {
  const serialize = (external: Record<string, object>, schema: object) => buildSerializerCompiler(external)({ schema });

  it('compiles a response schema once per process for the same shared schemas, whatever object states it', () => {
    const shared = { Problem: { $id: 'Problem', type: 'object', properties: { code: { type: 'string' } } } };
    const first = serialize(shared, { $ref: 'Problem' });
    assert.equal(serialize(structuredClone(shared), { $ref: 'Problem' }), first, 'another app, the same text: the same serializer');
    assert.equal(first({ code: 'not_found', secret: 'dropped' }), '{"code":"not_found"}');
  });

  it('compiles again when the shared schemas differ, so each app serializes by its own', () => {
    const withCode = { Thing: { $id: 'Thing', type: 'object', properties: { code: { type: 'string' } } } };
    const withName = { Thing: { $id: 'Thing', type: 'object', properties: { name: { type: 'string' } } } };
    const value = { code: 'c', name: 'n' };
    assert.equal(serialize(withCode, { $ref: 'Thing' })(value), '{"code":"c"}');
    assert.equal(serialize(withName, { $ref: 'Thing' })(value), '{"name":"n"}');
  });

  it('compiles a request schema once per process and part, with coercion only outside the body', () => {
    const schema = { type: 'object', properties: { limit: { type: 'integer' } } };
    const body = buildValidatorCompiler()({ schema, httpPart: 'body', method: 'POST', url: '/x' }) as (data: unknown) => boolean;
    assert.equal(buildValidatorCompiler()({ schema: structuredClone(schema), httpPart: 'body', method: 'POST', url: '/x' }), body, 'another app, a copy of the schema: the same function');
    const query = buildValidatorCompiler()({ schema, httpPart: 'querystring', method: 'GET', url: '/x' }) as (data: unknown) => boolean;
    assert.notEqual(query, body);
    assert.equal(body({ limit: '5' }), false, 'a body is not coerced');
    const text = { limit: '5' };
    assert.equal(query(text), true);
    assert.equal(text.limit, 5 as unknown as string, 'the query string is');
  });
});
