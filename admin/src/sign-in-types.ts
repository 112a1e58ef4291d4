/**
 * The API's shapes for how people sign in (API.md sections 18 to 20), as the OpenAPI document
 * states them; beside api.ts's list so that the pages of apps, providers and identities share them.
 */
import type { paths } from '../../client/api-types';
import type { Schemas } from '../../client/shop-client';

export type IdentityProvider = Schemas['IdentityProvider'];
export type LinkedIdentity = paths['/api/users/profile/identities']['get']['responses'][200]['content']['application/json']['items'][number];
export type AppConsent = paths['/api/users/profile/apps']['get']['responses'][200]['content']['application/json']['items'][number];
