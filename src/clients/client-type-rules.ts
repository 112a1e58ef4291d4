import type { ClientType } from '../db/tables.js';
import { AppError, type FieldProblem } from '../http/errors.js';
import { SIGN_IN_SCOPE_NAMES } from '../sessions/access-rule.js';
import { APP_FIELDS, type ClientPatch, type CreateClientInput } from './client-schemas.js';
import { refuseLogoUri, refuseRedirectUri } from './redirect-uri-rules.js';

const SIGN_IN_SCOPE_SET: ReadonlySet<string> = new Set(SIGN_IN_SCOPE_NAMES);
const CLIENT_TYPES: readonly string[] = ['service', 'confidential', 'public'];
const ONLY_FOR_APPS = 'is only for confidential and public clients';

/** A body as sent: the rules also run on one that broke its schema, so that one reply lists every problem. */
type SentBody = Partial<Record<string, unknown>>;
const listOf = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

/** What a body of a client of this type may not hold, beyond what its schema says; each problem at its field. */
function problemsOf(type: ClientType, sent: SentBody): FieldProblem[] {
  if (type === 'service') {
    // A service client never signs a user in: nothing of an app's, so no redirect can ever reach it.
    const appFields = APP_FIELDS.filter((field) => sent[field] !== undefined).map((field) => ({ path: `/${field}`, message: ONLY_FOR_APPS }));
    const signInScopes = listOf(sent.scopes).flatMap((scope, index) =>
      typeof scope === 'string' && SIGN_IN_SCOPE_SET.has(scope) ? [{ path: `/scopes/${index}`, message: `${ONLY_FOR_APPS} (a sign-in scope)` }] : [],
    );
    return [...appFields, ...signInScopes];
  }
  const uris = (field: 'redirect_uris' | 'post_logout_redirect_uris') =>
    listOf(sent[field]).flatMap((uri, index) => {
      const refusal = typeof uri === 'string' ? refuseRedirectUri(uri) : undefined;
      return refusal ? [{ path: `/${field}/${index}`, message: refusal }] : [];
    });
  const logoRefusal = typeof sent.logo_uri === 'string' ? refuseLogoUri(sent.logo_uri) : undefined;
  return [...uris('redirect_uris'), ...uris('post_logout_redirect_uris'), ...(logoRefusal ? [{ path: '/logo_uri', message: logoRefusal }] : [])];
}

const refusal = (problems: FieldProblem[]) => new AppError('validation_failed', 'The request does not match the schema.', problems);

/**
 * A new client's body against its type's rules (API.md section 18, "Apps"); none when its `type`
 * is not one the service knows (the schema says so).
 */
export function creationProblems(body: SentBody): FieldProblem[] {
  const type = body.type ?? 'service';
  if (typeof type !== 'string' || !CLIENT_TYPES.includes(type)) return [];
  const problems = problemsOf(type as ClientType, body);
  if (type !== 'service' && body.redirect_uris === undefined) problems.unshift({ path: '/redirect_uris', message: 'is required for a confidential or public client' });
  return problems;
}

/** A patch against the type of the client it changes (which a patch never changes). */
export function patchProblems(type: ClientType, patch: SentBody): FieldProblem[] {
  return problemsOf(type, patch);
}

/** 400 `validation_failed` listing every problem of a new client's body under its type's rules. */
export function assertCreatable(input: CreateClientInput): void {
  const problems = creationProblems(input);
  if (problems.length > 0) throw refusal(problems);
}

/** 400 `validation_failed` listing every problem of a patch under the rules of the client's type. */
export function assertPatchable(type: ClientType, patch: ClientPatch): void {
  const problems = patchProblems(type, patch);
  if (problems.length > 0) throw refusal(problems);
}
