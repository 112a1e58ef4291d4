import { randomBytes } from 'node:crypto';
import pg from 'pg';

/**
 * Creates an empty database on the server that `serverUrl` names, for one test file, bench
 * or crash run; `drop` removes it again, closing any connection still open to it.
 */
export async function createScratchDatabase(serverUrl: string, prefix = 't'): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  const run = async (statement: string) => {
    const client = new pg.Client({ connectionString: serverUrl });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await run(`create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => run(`drop database if exists ${name} with (force)`) };
}
