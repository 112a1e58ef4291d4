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
  for (let attempt = 0; attempt < 300; attempt++) {
    try {
      if ((await fetch(`${baseUrl}/healthz`)).ok) return { child, baseUrl, exited };
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  child.kill('SIGKILL');
  throw new Error('the service did not start');
}

export async function postJson(url: string, body: unknown, headers: Record<string, string> = {}, method = 'POST') {
  const response = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json().catch(() => undefined)) as Record<string, unknown> | undefined };
}
