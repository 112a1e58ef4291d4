import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { VerifiedTokens } from '../../src/sessions/verified-tokens.js';

const inSeconds = (seconds: number) => Math.floor(Date.now() / 1000) + seconds;

describe('verified access tokens remembered between requests', () => {
  it('gives back the claims of a remembered token until it expires', () => {
    const tokens = new VerifiedTokens<{ sub: string; exp: number }>();
    assert.equal(tokens.get('a.b.c'), undefined);
    tokens.remember('a.b.c', { sub: 'alice', exp: inSeconds(60) });
    assert.deepEqual(tokens.get('a.b.c'), { sub: 'alice', exp: inSeconds(60) });
    assert.equal(tokens.get('a.b.d'), undefined, 'another token, even one character apart, is not a hit');
    assert.equal(tokens.get('a.x.c'), undefined, 'nor the same signature under another payload');
    assert.equal(tokens.get('c'), undefined);
    tokens.remember('x.y.z', { sub: 'bob', exp: inSeconds(-1) });
    assert.equal(tokens.get('x.y.z'), undefined, 'an expired token is verified again (and refused)');
  });

  it('forgets a token once the key that verified it is no longer live', () => {
    const live = new Set(['key-1']);
    const tokens = new VerifiedTokens<{ exp: number }>((kid) => live.has(kid));
    tokens.remember('t.o.k', { exp: inSeconds(60) }, 'key-1');
    assert.ok(tokens.get('t.o.k'));
    live.delete('key-1');
    assert.equal(tokens.get('t.o.k'), undefined);
    live.add('key-1');
    assert.equal(tokens.get('t.o.k'), undefined, 'forgotten for good: a key coming back verifies the token anew');
  });

  it('keeps at most 10,000 tokens', () => {
    const tokens = new VerifiedTokens<{ exp: number }>();
    for (let index = 0; index <= 10_000; index++) tokens.remember(`token-${index}`, { exp: inSeconds(60) });
    assert.equal(tokens.get('token-0'), undefined);
    assert.ok(tokens.get('token-10000'));
  });
});
