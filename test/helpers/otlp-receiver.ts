import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A span as OTLP's JSON protocol sends it. */
export interface ExportedSpan {
  name: string;
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  links?: { traceId: string; spanId: string }[];
  attributes?: { key: string; value: Record<string, unknown> }[];
}

/** An OTLP/HTTP collector in the test process, speaking the JSON protocol: it keeps every span it is sent. */
export class OtlpReceiver {
  readonly spans: ExportedSpan[] = [];
  readonly resources: Record<string, unknown>[] = [];
  #server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      const payload = JSON.parse(body) as { resourceSpans: { resource: Record<string, unknown>; scopeSpans: { spans: ExportedSpan[] }[] }[] };
      for (const resourceSpans of payload.resourceSpans) {
        this.resources.push(resourceSpans.resource);
        for (const scope of resourceSpans.scopeSpans) this.spans.push(...scope.spans);
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', () => resolve()));
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}

/** A span attribute's value, whatever its OTLP type (`stringValue`, `intValue`, ...). */
export const attribute = (span: ExportedSpan, key: string) => {
  const value = span.attributes?.find((candidate) => candidate.key === key)?.value;
  return value ? Object.values(value)[0] : undefined;
};
