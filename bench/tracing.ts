import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { measure, type Figures } from './measure.js';
import { pick, serviceEnvironment, startBenchService } from './setup.js';

/** A local OTLP/HTTP receiver that takes every export and answers 200, counting the requests. */
async function startReceiver(): Promise<{ url: string; exports: () => number; close: () => Promise<void> }> {
  let exports = 0;
  const server = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      exports++;
      response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, exports: () => exports, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/**
 * The by-id read with tracing off (the service as it runs by default) against the same service
 * started with `OTEL_EXPORTER_OTLP_ENDPOINT` and `OTEL_TRACES_SAMPLER=always_on`, exporting every
 * span to a local receiver; alternated round by round.
 */
export async function runTracingComparison(
  untraced: { baseUrl: string },
  databaseUrl: string,
  data: { auth: Record<string, string>; variants: { id: string }[] },
  options: { connections: number; duration: number; rounds: number },
) {
  const receiver = await startReceiver();
  const traced = await startBenchService({
    ...(await serviceEnvironment({ url: databaseUrl })),
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_TRACES_SAMPLER: 'always_on',
    OTEL_SERVICE_NAME: 'shop-accounts-bench',
  });
  try {
    const rows: Figures[] = [];
    let off = 0;
    let on = 0;
    for (let round = 0; round < options.rounds; round++) {
      const path = () => `/api/variants/${pick(data.variants).id}`;
      const plain = await measure(untraced.baseUrl, { name: 'GET /api/variants/{id}, tracing off', path, headers: data.auth }, options);
      const withSpans = await measure(traced.baseUrl, { name: 'GET /api/variants/{id}, tracing on (always_on, OTLP to a local receiver)', path, headers: data.auth }, options);
      rows.push(plain, withSpans);
      off += plain.requestsPerSecond;
      on += withSpans.requestsPerSecond;
    }
    return { rows, ratio: on / off, exports: receiver.exports() };
  } finally {
    traced.child.kill('SIGTERM');
    await traced.exited;
    await receiver.close();
  }
}
