/** True when `error` is PostgreSQL's unique violation on the named index or constraint. */
export function isUniqueViolation(error: unknown, constraint: string): boolean {
  const candidate = error as { code?: string; constraint?: string } | undefined;
  return candidate?.code === '23505' && candidate.constraint === constraint;
}
