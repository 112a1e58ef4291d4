// Written by `npm run openapi` from /openapi.json: do not edit (a test fails when it is stale).

/** A new password's length in characters (change-password, password-reset confirm). */
export const newPasswordLength = { min: 8, max: 128 } as const;
