import type { ClientType } from '../db/tables.js';
import { AppError, type FieldProblem } from '../http/errors.js';
import { SIGN_IN_SCOPE_NAMES } from '../sessions/access-rule.js';
import { APP_FIELDS, type ClientPatch, type CreateClientInput } from './client-schemas.js';
import { refuseLogoUri, refuseRedirectUri } from './redirect-uri-rules.js';

const SIGN_IN_SCOPE_SET: ReadonlySet<string> = new Set(SIGN_IN_SCOPE_NAMES);
const ONLY_FOR_APPS = 'is only for confidential and public clients';

/** What a body of a client of this type may not hold, beyond what its schema says; each problem at its field. */
function problemsOf(type: ClientType, sent: ClientPatch): FieldProblem[] {
  if (type === 'service') {
    // A service client never signs a user in: nothing of an app's, so no redirect can ever reach it.
    const appFields = APP_FIELDS.filter((field) => sent[field] !== undefined).map((field) => ({ path: `/${field}`, message: ONLY_FOR_APPS }));
    const signInScopes = (sent.scopes ?? []).flatMap((scope, index) => (SIGN_IN_SCOPE_SET.has(scope) ? [{ path: `/scopes/${index}`, message: `${ONLY_FOR_APPS} (a sign-in scope)` }] : []));
    return [...appFields, ...signInScopes];
  }
  const uris = (field: 'redirect_uris' | 'post_logout_redirect_uris') =>
    (sent[field] ?? []).flatMap((uri, index) => {
      const refusal = refuseRedirectUri(uri);
      return refusal ? [{ path: `/${field}/${index}`, message: refusal }] : [];
    });
  const logoRefusal = typeof sent.logo_uri === 'string' ? refuseLogoUri(sent.logo_uri) : undefined;
  return [...uris('redirect_uris'), ...uris('post_logout_redirect_uris'), ...(logoRefusal ? [{ path: '/logo_uri', message: logoRefusal }] : [])];
}

const refusal = (problems: FieldProblem[]) => new AppError('validation_failed', 'The request does not match the schema.', problems);

/** A new client's body against its type's rules (API.md section 18, "Apps"): 400 `validation_failed` listing every problem. */
export function assertCreatable(input: CreateClientInput): void {
  const type = input.type ?? 'service';
  const problems = problemsOf(type, input);
  if (type !== 'service' && input.redirect_uris === undefined) problems.unshift({ path: '/redirect_uris', message: 'is required for a confidential or public client' });
  if (problems.length > 0) throw refusal(problems);
}

/** A patch against the type of the client it changes (which a patch never changes). */
export function assertPatchable(type: ClientType, patch: ClientPatch): void {
  const problems = problemsOf(type, patch);
  if (problems.length > 0) throw refusal(problems);
}
