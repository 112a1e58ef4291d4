import { createHmac } from 'node:crypto';

const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** Hand-made JWTs, so tests can forge exactly the flaw they check for. */
export function forgeJwt(header: Record<string, unknown>, payload: Record<string, unknown>, secret?: string): string {
  const signingInput = `${encode(header)}.${encode(payload)}`;
  const signature = secret ? createHmac('sha256', secret).update(signingInput).digest('base64url') : '';
  return `${signingInput}.${signature}`;
}

export function decodeJwt(token: string): { header: Record<string, unknown>; payload: Record<string, unknown> } {
  const [header, payload] = token.split('.');
  return {
    header: JSON.parse(Buffer.from(header ?? '', 'base64url').toString()),
    payload: JSON.parse(Buffer.from(payload ?? '', 'base64url').toString()),
  };
}
