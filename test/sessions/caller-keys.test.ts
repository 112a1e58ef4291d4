import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ChangeFeed } from '../../src/db/change-feed.js';
import type { CallerColumns } from '../../src/sessions/caller-query.js';
import { CallerKeys, MOST_SECRETS_KEPT } from '../../src/sessions/caller-keys.js';
import { KnownCallers } from '../../src/sessions/known-callers.js';
import type { AccessTokenClaims } from '../../src/sessions/token-issuer.js';

const clientRow = (id: string): CallerColumns => ({
  caller__kind: 'client',
  caller__id: id,
  caller__role: null,
  caller__status: 'active',
  caller__live: true,
  caller__stale: false,
  caller__scopes: ['variants:read'],
  caller__rate_limit: null,
  caller__credential: null,
  caller__mfa_enrolled: false,
  caller__mfa_age: null,
  caller__expires_in: null,
  caller__idle_for: 10,
});

describe('caller keys: one key object a credential, which known callers are kept under', () => {
  it('gives the same key for the same claims object and the same secret hash', () => {
    const keys = new CallerKeys(new KnownCallers(new ChangeFeed()));
    const claims = { sub: 'u1', sid: 's1' } as AccessTokenClaims;
    assert.equal(keys.ofClaims(claims), keys.ofClaims(claims));
    assert.deepEqual(keys.ofClaims(claims), { kind: 'user', userId: 'u1', sessionId: 's1' });
    assert.notEqual(keys.ofClaims(claims), keys.ofClaims({ ...claims }), 'another token, another key');
    assert.equal(keys.ofSecretHash('h1'), keys.ofSecretHash('h1'));
    assert.deepEqual(keys.ofSecretHash('h1'), { kind: 'client-secret', secretHash: 'h1' });
  });

  it('past the bound, unknown secrets make way and a client in use keeps its key and its known caller', () => {
    const callers = new KnownCallers(new ChangeFeed());
    const keys = new CallerKeys(callers);
    const inUse = keys.ofSecretHash('in-use');
    callers.remember(inUse, clientRow('client-1'), callers.mark());
    // Well-formed secrets that name no client, as anyone may send: the database refuses them, nobody remembers them.
    for (let index = 0; index < MOST_SECRETS_KEPT + 10; index++) keys.ofSecretHash(`unknown-${index}`);
    assert.equal(keys.ofSecretHash('in-use'), inUse, "the client's key is the same object");
    assert.ok(callers.get(inUse), 'so its caller is still known');
  });
});
