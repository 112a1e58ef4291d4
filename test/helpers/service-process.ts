import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';

/**
 * A port nothing listens on now, chosen by the system: a random number in the ephemeral range
 * may be the local end of one of this machine's own outgoing connections.
 */
export function freePort(): Promise<string> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(String(port)));
    });
  });
}

/** Long enough for a start on a loaded machine (compiling, migrating); a child that exits ends the wait at once. */
const START_DEADLINE_MS = 180_000;

/**
 * Waits until `url` answers 2xx, polling while the child lives: readiness, not a fixed time, so
 * a loaded machine only makes it slower. Throws when the child exits first or the deadline passes.
 */
export async function waitUntilServing(url: string, child: ChildProcess, describe: () => string = () => ''): Promise<void> {
  const deadline = Date.now() + START_DEADLINE_MS;
  let exitCode: number | null | undefined;
  child.once('exit', (code) => (exitCode = code));
  while (Date.now() < deadline) {
    if (exitCode !== undefined || child.exitCode !== null) throw new Error(`the service exited (${exitCode ?? child.exitCode}) before it served\n${describe()}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`the service did not serve within ${START_DEADLINE_MS / 1000} s\n${describe()}`);
}

/** Starts a server script (the service by default) as a child process; resolves once it answers /healthz. */
export async function startService(
  environment: Record<string, string>,
  script = 'src/server.ts',
  nodeArguments: string[] = [],
): Promise<{ child: ChildProcess; baseUrl: string; exited: Promise<number | null> }> {
  const port = environment.PORT ?? '3000';
  // A built script (dist/*.js) runs as production runs it; TypeScript goes through tsx.
  const loader = script.endsWith('.ts') ? ['--import', 'tsx'] : [];
  const child = spawn(process.execPath, [...nodeArguments, ...loader, script], {
    env: { ...process.env, LOG_LEVEL: 'warn', ...environment },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitUntilServing(`${baseUrl}/healthz`, child);
  return { child, baseUrl, exited };
}

export async function postJson(url: string, body: unknown, headers: Record<string, string> = {}, method = 'POST') {
  const response = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json().catch(() => undefined)) as Record<string, unknown> | undefined };
}
