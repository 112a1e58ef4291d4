// How another service (checkout, orders) verifies this service's access tokens without any
// secret: fetch the public keys once (jose caches and refreshes them), then verify locally.
import { createRemoteJWKSet, jwtVerify } from 'jose';

export function accessTokenVerifier(serviceUrl, { issuer = 'shop-accounts-service', audience = 'shop-accounts-api' } = {}) {
  const keys = createRemoteJWKSet(new URL('/.well-known/jwks.json', serviceUrl));
  return async (token) => {
    const { payload, protectedHeader } = await jwtVerify(token, keys, { issuer, audience, algorithms: ['EdDSA'], typ: 'at+jwt' });
    // payload.sub is the user, payload.sid the session. A signature says who the token was
    // issued to; whether its session has ended since is known only to this service.
    return { userId: payload.sub, sessionId: payload.sid, keyId: protectedHeader.kid };
  };
}
