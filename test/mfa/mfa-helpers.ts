import assert from 'node:assert/strict';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import type { Session } from '../helpers/test-app.js';
import type { SoftwareAuthenticator } from '../helpers/software-authenticator.js';
import { TotpDevice } from '../helpers/totp-device.js';

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** Adds and confirms an authenticator app for the session's user; returns the device and the confirm reply. */
export async function enrolTotp(app: FastifyInstance, session: Session, name = 'Phone') {
  const started = await app.inject({ method: 'POST', url: '/api/auth/mfa/totp', headers: session.auth, payload: { name } });
  assert.equal(started.statusCode, 201, started.body);
  const device = new TotpDevice(started.json().secret);
  const confirmed = await app.inject({ method: 'POST', url: `/api/auth/mfa/totp/${started.json().id}/confirm`, headers: session.auth, payload: { code: device.next() } });
  assert.equal(confirmed.statusCode, 200, confirmed.body);
  return { device, factor: confirmed.json() as { id: string; recovery_codes?: string[] }, started: started.json() as { id: string; secret: string; otpauth_url: string } };
}

/** A login whose user has a second factor: its 403 `mfa_required` reply. */
export async function firstStep(app: FastifyInstance, email: string, password: string): Promise<{ reply: LightMyRequestResponse; mfaToken: string; methods: string[] }> {
  const reply = await app.inject({ method: 'POST', url: '/api/auth/login', payload: { email, password } });
  assert.equal(reply.statusCode, 403, reply.body);
  return { reply, mfaToken: reply.json().mfa_token, methods: reply.json().methods };
}

/** Both steps of a login with a TOTP code: the new session's tokens. */
export async function loginWithTotp(app: FastifyInstance, email: string, password: string, device: TotpDevice) {
  const { mfaToken } = await firstStep(app, email, password);
  const second = await app.inject({ method: 'POST', url: '/api/auth/login/mfa', payload: { mfa_token: mfaToken, code: device.next() } });
  assert.equal(second.statusCode, 200, second.body);
  const tokens = second.json() as { access_token: string; refresh_token: string };
  return { ...tokens, auth: bearer(tokens.access_token) };
}

/** Registers a passkey of the authenticator for the session's user (a factor of section 12); returns the reply. */
export async function registerPasskey(app: FastifyInstance, session: Session, authenticator: SoftwareAuthenticator, name?: string) {
  const options = await app.inject({ method: 'POST', url: '/api/auth/mfa/webauthn/registration-options', headers: session.auth });
  assert.equal(options.statusCode, 200, options.body);
  const response = authenticator.register(options.json());
  return app.inject({ method: 'POST', url: '/api/auth/mfa/webauthn', headers: session.auth, payload: { ...(name ? { name } : {}), response } });
}
