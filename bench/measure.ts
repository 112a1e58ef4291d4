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
  /** Milliseconds, to a hundredth. */
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
  total: number;
}

export async function measure(
  baseUrl: string,
  scenario: Scenario,
  options: { connections: number; duration?: number; amount?: number; afterWarmUp?: () => Promise<void>; warmUpSeconds?: number },
): Promise<Figures> {
  // An unmeasured second (or more) first, so JIT warm-up and pool growth do not count against a scenario.
  await run(baseUrl, scenario, { connections: options.connections, duration: options.warmUpSeconds ?? 1 });
  await options.afterWarmUp?.();
  // autocannon's own percentiles are whole milliseconds: at a p99 of 3 to 6 ms a ratio of two
  // moves by a third on rounding alone, so the percentiles are taken from each 2xx reply's time.
  const latencies: number[] = [];
  // Without a callback autocannon returns its instance, which is also the promise of the result.
  const instance = run(baseUrl, scenario, options) as Promise<autocannon.Result> & autocannon.Instance;
  instance.on('response', (_client: unknown, statusCode: number, _bytes: number, milliseconds: number) => {
    if (statusCode >= 200 && statusCode < 300) latencies.push(milliseconds);
  });
  const result = await instance;
  latencies.sort((a, b) => a - b);
  return {
    name: scenario.name,
    requestsPerSecond: result.requests.average,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    total: result.requests.total,
  };
}

/** The nearest-rank percentile of sorted values, to a hundredth of a millisecond; 0 when there are none. */
export function percentile(sorted: number[], fraction: number): number {
  if (sorted.length === 0) return 0;
  const value = sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)]!;
  return Math.round(value * 100) / 100;
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
