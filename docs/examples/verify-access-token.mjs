// How another service (checkout, orders) verifies this service's access tokens without any
// secret: fetch the public keys once (jose caches and refreshes them), then verify locally.
import { createRemoteJWKSet, jwtVerify } from 'jose';

// The issuer (JWT_ISSUER, by default the service's PUBLIC_URL) is read once from the service's
// RFC 8414 metadata unless given.
export function accessTokenVerifier(serviceUrl, { issuer, audience = 'shop-accounts-api' } = {}) {
  const keys = createRemoteJWKSet(new URL('/.well-known/jwks.json', serviceUrl));
  let expectedIssuer = issuer;
  return async (token, { scope } = {}) => {
    expectedIssuer ??= (await (await fetch(new URL('/.well-known/oauth-authorization-server', serviceUrl))).json()).issuer;
    const { payload, protectedHeader } = await jwtVerify(token, keys, { issuer: expectedIssuer, audience, algorithms: ['EdDSA'], typ: 'at+jwt' });
    const scopes = typeof payload.scope === 'string' ? payload.scope.split(' ').filter(Boolean) : [];
    if (payload.sid === undefined) {
      // An API client's token (client credentials grant): no session, the scopes it was granted.
      if (scope !== undefined && !scopes.includes(scope)) throw new Error(`the token lacks the scope ${scope}`);
      return { clientId: payload.client_id, scopes, keyId: protectedHeader.kid };
    }
    // A user's token: payload.sub is the user, payload.sid the session. A signature says who the
    // token was issued to; whether its session has ended since is known only to this service.
    if (payload.client_id !== undefined) {
      // An app's token for its user: the user's role still bounds it, so a scope alone proves
      // little here; ask this service (its introspection, or the API itself) before trusting it.
      if (scope !== undefined && !scopes.includes(scope)) throw new Error(`the token lacks the scope ${scope}`);
      return { userId: payload.sub, sessionId: payload.sid, appId: payload.client_id, scopes, keyId: protectedHeader.kid };
    }
    if (scope !== undefined) throw new Error('a user token carries no scopes');
    return { userId: payload.sub, sessionId: payload.sid, keyId: protectedHeader.kid };
  };
}
