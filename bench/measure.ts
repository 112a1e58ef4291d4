import autocannon from 'autocannon';

export interface Scenario {
  name: string;
  method?: 'GET' | 'PUT' | 'POST';
  /** Called for every request, so each can pick another id. */
  path: () => string;
  body?: () => unknown;
  headers?: Record<string, string>;
}

export interface Figures {
  name: string;
  requestsPerSecond: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
  total: number;
}

export async function measure(
  baseUrl: string,
  scenario: Scenario,
  options: { connections: number; duration?: number; amount?: number; afterWarmUp?: () => Promise<void> },
): Promise<Figures> {
  // An unmeasured second first, so JIT warm-up and pool growth do not count against a scenario.
  await run(baseUrl, scenario, { connections: options.connections, duration: 1 });
  await options.afterWarmUp?.();
  const result = await run(baseUrl, scenario, options);
  return {
    name: scenario.name,
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    total: result.requests.total,
  };
}

function run(baseUrl: string, scenario: Scenario, options: { connections: number; duration?: number; amount?: number }) {
  return autocannon({
    url: baseUrl,
    connections: options.connections,
    ...(options.amount ? { amount: options.amount } : { duration: options.duration ?? 10 }),
    requests: [
      {
        method: scenario.method ?? 'GET',
        setupRequest: (request) => ({
          ...request,
          path: scenario.path(),
          headers: { ...scenario.headers, ...(scenario.body ? { 'content-type': 'application/json' } : {}) },
          ...(scenario.body ? { body: JSON.stringify(scenario.body()) } : {}),
        }),
      },
    ],
  });
}

export function formatTable(rows: Figures[]): string {
  const lines = ['| scenario | req/s | p50 ms | p99 ms | errors | non-2xx |', '|---|---:|---:|---:|---:|---:|'];
  for (const row of rows) {
    lines.push(`| ${row.name} | ${row.requestsPerSecond.toFixed(0)} | ${row.p50} | ${row.p99} | ${row.errors} | ${row.non2xx} |`);
  }
  return lines.join('\n');
}
