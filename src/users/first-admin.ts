import { randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { FastifyBaseLogger } from 'fastify';
import type { Database } from '../db/tables.js';
import { inTransaction } from '../db/transaction.js';
import { hashPassword } from '../sessions/passwords.js';
import { SERVICE_CONTEXT } from '../events/event-recorder.js';
import { anyAdminExists, findUserByEmail } from './user-repository.js';
import type { MailSettings } from './account-emails.js';
import { createUser } from './user-service.js';

// Any constant works; it only has to be the same for every instance.
const BOOTSTRAP_LOCK_KEY = 720_431_119;

/**
 * Creates the first admin when none exists, under an advisory lock so instances starting
 * together create one. Without ADMIN_PASSWORD the generated password is printed once to
 * stderr, outside the JSON logs, which never carry passwords. What the person starting the
 * service must know (the password, or that their ADMIN_EMAIL was not used) goes there as a
 * plain line too: a newcomer reads the terminal, not the JSON log.
 */
export async function ensureFirstAdmin(
  db: Kysely<Database>,
  options: { email: string | undefined; password: string | undefined },
  log: FastifyBaseLogger,
  mail: MailSettings,
  tellOperator: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Promise<void> {
  const email = options.email ?? 'admin@localhost';
  const password = options.password ?? randomBytes(18).toString('base64url');
  const passwordHash = await hashPassword(password);
  const created = await inTransaction(db, async (trx) => {
    await sql`select pg_advisory_xact_lock(${BOOTSTRAP_LOCK_KEY})`.execute(trx);
    if (await anyAdminExists(trx)) {
      if (options.email) {
        log.warn({ email: options.email }, 'an admin exists already; ADMIN_EMAIL and ADMIN_PASSWORD were not used');
        tellOperator(`An admin exists already, so ADMIN_EMAIL (${options.email}) and ADMIN_PASSWORD were not used: they only create the first admin.`);
      }
      return false;
    }
    if (await findUserByEmail(trx, email)) {
      log.warn({ email }, 'no admin exists and the bootstrap admin email belongs to another account; none created');
      return false;
    }
    await createUser(trx, { email, passwordHash, name: 'Administrator', role: 'admin', emailVerified: true }, SERVICE_CONTEXT, mail);
    return true;
  });
  if (!created) return;
  log.info({ email }, 'created the first admin');
  if (!options.password) {
    tellOperator(`First admin created: ${email} with password ${password} (shown once; change it).`);
  }
}
