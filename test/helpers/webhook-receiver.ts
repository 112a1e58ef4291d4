import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedDelivery {
  headers: http.IncomingHttpHeaders;
  body: string;
}

/**
 * A real HTTP server in the test process that plays a webhook subscriber. `answer` decides each
 * reply: a status, or 'hang' to never answer (a timeout, or an instance killed mid-send).
 */
export class WebhookReceiver {
  readonly received: ReceivedDelivery[] = [];
  answer: (delivery: ReceivedDelivery) => number | 'hang' = () => 204;
  #server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      const delivery = { headers: request.headers, body };
      this.received.push(delivery);
      const answer = this.answer(delivery);
      if (answer === 'hang') return;
      response.writeHead(answer).end();
    });
  });

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', () => resolve()));
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/hooks`;
  }

  async stop(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
