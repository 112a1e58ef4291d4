/**
 * The bare reference of an app's sign-in (API.md section 18): the authorization code flow of a
 * first-party public app for a browser already signed in, done by the simplest correct code over
 * the service's own tables, each statement named and prepared, on a pool of the service's size,
 * with no framework of authentication, no schema validation, no events, no metrics and no log.
 *
 * - GET /oauth/authorize reads the app (its redirect URI, its scopes), the sign-in session whose
 *   cookie secret hashes to the row's `browser_secret_hash` (live, its user active), and inserts
 *   the code's row; a 303 to the redirect URI with `code`, `state` and `iss`.
 * - POST /api/oauth/token reads the app and notes its use (at most a write a minute, as section 11
 *   asks of every client), then in one transaction locks the code's row beside the sign-in
 *   session it came from, share-locks the user (whose claims the ID token carries), inserts the
 *   app's session and spends the code; it signs an EdDSA access token and an RS256 ID token, as
 *   the service signs them by default, with keys of its own made at start (which key signs is not
 *   the work; signing is).
 * - GET /oauth/userinfo reads the user beside the session the token names (live, its user
 *   active), so an ended session counts at once as the API requires. Like the by-id reference,
 *   it does not check the token's signature (the service's authentication is part of the gap):
 *   it reads `sub`, `sid` and `scope` from the token's payload.
 *
 * It answers with the replies the service sends (the same fields, the API's security headers, a
 * request id, `no-store`), so the load generator, which shares the two cores, reads the same bytes
 * from both. A fault is a bare `{ error }`: the bench never meets one.
 */
import { createHash, generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import Fastify, { type FastifyReply } from 'fastify';
import { createSigner } from 'fast-jwt';
import pg from 'pg';
import { API_HEADERS } from '../src/http/security.js';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DATABASE_POOL_SIZE ?? 10) });
const app = Fastify({ logger: false });
// The service's issuer in the bench (PUBLIC_URL), its default audience and the bench's token lifetime.
const issuer = process.env.JWT_ISSUER ?? 'http://127.0.0.1:3000';
const audience = 'shop-accounts-api';
const ttlSeconds = Number(process.env.ACCESS_TOKEN_TTL ?? 3600);
// The bench serves http on a loopback host, where the sign-in cookie has no `__Host-` prefix.
const SIGNIN_COOKIE = 'shop_sid';
const CODE_TTL_SECONDS = 60;

const accessKey = generateKeyPairSync('ed25519');
const idTokenKey = generateKeyPairSync('rsa', { modulusLength: 2048 });
const accessKid = randomUUID();
const idTokenKid = randomUUID();
const signAccessToken = createSigner({
  key: accessKey.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
  algorithm: 'EdDSA',
  kid: accessKid,
  iss: issuer,
  aud: audience,
  expiresIn: ttlSeconds * 1000,
  header: { alg: 'EdDSA', typ: 'at+jwt', kid: accessKid },
});
const signIdToken = createSigner({
  key: idTokenKey.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
  algorithm: 'RS256',
  kid: idTokenKid,
  header: { alg: 'RS256', typ: 'JWT', kid: idTokenKid },
});

const sha256Hex = (text: string) => createHash('sha256').update(text).digest('hex');

interface AppRow {
  id: string;
  type: string;
  status: string;
  scopes: string[];
  redirect_uris: string[];
  first_party: boolean;
}
const APP = { name: 'app', text: 'select id, type, status, scopes, redirect_uris, first_party from api_clients where id = $1 and deleted_at is null' };

/** The user's claims the scopes allow, as userinfo and the ID token carry them (src/oauth/user-claims.ts). */
function claimsFor(user: { email: string; email_verified: boolean; name: string; updated_at: Date }, scopes: string[]): Record<string, unknown> {
  return {
    ...(scopes.includes('email') && { email: user.email, email_verified: user.email_verified }),
    ...(scopes.includes('profile') && { name: user.name, updated_at: Math.floor(user.updated_at.getTime() / 1000) }),
  };
}

/** The headers of every reply of the service's (src/http/security.ts, http-frame.ts). */
const withApiHeaders = (reply: FastifyReply) => reply.headers(API_HEADERS).header('x-request-id', randomUUID()).header('cache-control', 'no-store');

function cookieOf(header: string | undefined, name: string): string | undefined {
  for (const pair of (header ?? '').split(';')) {
    const separator = pair.indexOf('=');
    if (separator !== -1 && pair.slice(0, separator).trim() === name) return pair.slice(separator + 1).trim();
  }
  return undefined;
}

app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, text, done) => done(null, Object.fromEntries(new URLSearchParams(text as string))));

app.get<{ Querystring: Record<string, string | undefined> }>('/oauth/authorize', async (request, reply) => {
  const query = request.query;
  withApiHeaders(reply);
  const client = (await pool.query<AppRow>({ ...APP, values: [query.client_id] })).rows[0];
  const scopes = (query.scope ?? '').split(' ').filter((scope) => scope !== '');
  if (!client || client.status !== 'active' || client.type === 'service' || !client.first_party || !client.redirect_uris.includes(query.redirect_uri ?? '')) return reply.code(400).send({ error: 'invalid_request' });
  if (query.response_type !== 'code' || query.code_challenge_method !== 'S256' || !query.code_challenge || scopes.some((scope) => !client.scopes.includes(scope))) {
    return reply.code(400).send({ error: 'invalid_request' });
  }
  const secret = cookieOf(request.headers.cookie, SIGNIN_COOKIE);
  const { rows } = await pool.query<{ id: string; user_id: string; auth_time: Date; amr: string[] }>({
    name: 'signin-session',
    text: `select sessions.id, sessions.user_id, sessions.auth_time, sessions.amr from sessions join users on users.id = sessions.user_id
           where sessions.browser_secret_hash = $1 and sessions.ended_at is null and sessions.expires_at > now() and users.status = 'active' and users.deleted_at is null`,
    values: [secret === undefined ? '' : sha256Hex(secret)],
  });
  const signIn = rows[0];
  // The sign-in page is the service's to show: the bench always comes signed in.
  if (!signIn) return reply.code(400).send({ error: 'login_required' });
  const code = randomBytes(32).toString('base64url');
  await pool.query({
    name: 'insert-code',
    text: `insert into authorization_codes (id, code_hash, client_id, user_id, redirect_uri, code_challenge, nonce, scopes, signin_session_id, auth_time, amr, created_at, expires_at)
           values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, now(), now() + $12 * interval '1 second')`,
    values: [randomUUID(), sha256Hex(code), client.id, signIn.user_id, query.redirect_uri, query.code_challenge, query.nonce ?? null, scopes, signIn.id, signIn.auth_time, signIn.amr, CODE_TTL_SECONDS],
  });
  const location = new URL(query.redirect_uri!);
  location.searchParams.append('code', code);
  if (query.state !== undefined) location.searchParams.append('state', query.state);
  location.searchParams.append('iss', issuer);
  return reply.code(303).header('location', location.href).send();
});

interface CodeRow {
  id: string;
  client_id: string;
  user_id: string;
  redirect_uri: string;
  code_challenge: string;
  nonce: string | null;
  scopes: string[];
  signin_session_id: string;
  auth_time: Date;
  amr: string[];
  expires_at: Date;
  used_at: Date | null;
  session_id: string | null;
  signin_live: boolean;
}
interface UserRow {
  id: string;
  email: string;
  email_verified: boolean;
  name: string;
  updated_at: Date;
  status: string;
  deleted_at: Date | null;
}

/** The exchange's transaction: the tokens' subject, or the OAuth error to answer. */
async function exchange(client: AppRow, form: Record<string, string | undefined>, userAgent: string | undefined, ip: string) {
  const connection = await pool.connect();
  try {
    await connection.query('begin');
    // The code and the sign-in it came from, both locked: of two exchanges of one code one finds it unused, and a logout waits.
    const code = (
      await connection.query<CodeRow>({
        name: 'lock-code',
        text: `select authorization_codes.*, (sessions.ended_at is null and sessions.expires_at > now()) as signin_live
               from authorization_codes join sessions on sessions.id = authorization_codes.signin_session_id
               where authorization_codes.code_hash = $1 for update`,
        values: [sha256Hex(form.code ?? '')],
      })
    ).rows[0];
    const challenge = createHash('sha256')
      .update(form.code_verifier ?? '')
      .digest('base64url');
    if (code?.used_at) {
      // A code presented again ends the session its first exchange started (RFC 9700).
      await connection.query({ name: 'end-session', text: 'update sessions set ended_at = now() where id = $1 and ended_at is null', values: [code.session_id] });
      await connection.query('commit');
      return undefined;
    }
    const user = code && (await connection.query<UserRow>({ name: 'lock-user', text: 'select * from users where id = $1 for share', values: [code.user_id] })).rows[0];
    if (
      !code ||
      !user ||
      code.client_id !== client.id ||
      code.expires_at.getTime() <= Date.now() ||
      code.redirect_uri !== form.redirect_uri ||
      challenge !== code.code_challenge ||
      !code.signin_live ||
      user.deleted_at ||
      user.status !== 'active'
    ) {
      await connection.query('rollback');
      return undefined;
    }
    const scopes = code.scopes.filter((scope) => client.scopes.includes(scope));
    const session = (
      await connection.query<{ id: string; auth_time: Date; amr: string[] }>({
        name: 'insert-session',
        // Without offline_access nothing renews the session: it lives as long as its access token.
        text: `insert into sessions (id, user_id, created_at, last_used_at, expires_at, user_agent, ip, amr, auth_time, mfa_verified_at, client_id, scopes, signin_session_id)
               values ($1, $2, now(), now(), now() + $3 * interval '1 second', $4, $5, $6, $7, $8, $9, $10, $11) returning id, auth_time, amr`,
        values: [randomUUID(), user.id, ttlSeconds, userAgent?.slice(0, 500) ?? null, ip, code.amr, code.auth_time, code.amr.includes('mfa') ? code.auth_time : null, client.id, scopes, code.signin_session_id],
      })
    ).rows[0]!;
    await connection.query({ name: 'spend-code', text: 'update authorization_codes set used_at = now(), session_id = $2 where id = $1', values: [code.id, session.id] });
    await connection.query('commit');
    return { user, session, scopes, nonce: code.nonce };
  } catch (error) {
    await connection.query('rollback');
    throw error;
  } finally {
    connection.release();
  }
}

app.post<{ Body: Record<string, string | undefined> }>('/api/oauth/token', async (request, reply) => {
  const form = request.body;
  withApiHeaders(reply).header('pragma', 'no-cache');
  if (form.grant_type !== 'authorization_code') return reply.code(400).send({ error: 'unsupported_grant_type' });
  const client = (await pool.query<AppRow>({ ...APP, values: [form.client_id] })).rows[0];
  if (!client || client.status !== 'active' || client.type !== 'public') return reply.code(401).send({ error: 'invalid_client' });
  await pool.query({ name: 'note-used', text: "update api_clients set last_used_at = now() where id = $1 and (last_used_at is null or last_used_at < now() - interval '1 minute')", values: [client.id] });
  const granted = await exchange(client, form, request.headers['user-agent'], request.ip);
  if (!granted) return reply.code(400).send({ error: 'invalid_grant' });
  const { user, session, scopes } = granted;
  const authTime = Math.floor(session.auth_time.getTime() / 1000);
  const accessToken = signAccessToken({ sub: user.id, sid: session.id, amr: session.amr, auth_time: authTime, client_id: client.id, scope: scopes.join(' '), jti: randomUUID() });
  const now = Math.floor(Date.now() / 1000);
  const digest = createHash('sha256').update(accessToken, 'ascii').digest();
  const idToken = scopes.includes('openid')
    ? signIdToken({
        ...claimsFor(user, scopes),
        iss: issuer,
        sub: user.id,
        aud: client.id,
        exp: now + ttlSeconds,
        iat: now,
        auth_time: authTime,
        ...(granted.nonce !== null && { nonce: granted.nonce }),
        sid: session.id,
        amr: session.amr,
        at_hash: digest.subarray(0, digest.length / 2).toString('base64url'),
      })
    : undefined;
  return { access_token: accessToken, token_type: 'Bearer', expires_in: ttlSeconds, scope: scopes.join(' '), ...(idToken && { id_token: idToken }) };
});

app.get('/oauth/userinfo', async (request, reply) => {
  withApiHeaders(reply);
  const token = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1] ?? '';
  let claims: { sub?: string; sid?: string; scope?: string } = {};
  try {
    claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString());
  } catch {
    return reply.code(401).send({ error: 'invalid_token' });
  }
  const { rows } = await pool.query<UserRow>({
    name: 'userinfo',
    text: `select users.* from users join sessions on sessions.id = $2 and sessions.user_id = users.id
           where users.id = $1 and users.deleted_at is null and users.status = 'active' and sessions.ended_at is null and sessions.expires_at > now()`,
    values: [claims.sub, claims.sid],
  });
  const user = rows[0];
  if (!user) return reply.code(401).send({ error: 'invalid_token' });
  return { sub: user.id, ...claimsFor(user, (claims.scope ?? '').split(' ')) };
});

app.get('/healthz', async () => ({ status: 'ok' }));
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
