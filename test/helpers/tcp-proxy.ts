import net from 'node:net';

/** A TCP forwarder that a test can cut, stall and restore, to play database outages. */
export class TcpProxy {
  #server: net.Server | undefined;
  readonly #pairs = new Set<[net.Socket, net.Socket]>();
  readonly #waiting = new Set<net.Socket>();
  #stalled = false;

  constructor(
    readonly port: number,
    private readonly target: { host: string; port: number },
  ) {}

  async start(): Promise<void> {
    const server = net.createServer((client) => {
      client.on('error', () => {});
      if (this.#stalled) {
        // Accepted and then never answered, like a host behind a link that drops packets.
        client.pause();
        this.#waiting.add(client);
        client.on('close', () => this.#waiting.delete(client));
        return;
      }
      this.#forward(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.#server = server;
  }

  #forward(client: net.Socket): void {
    const upstream = net.connect(this.target.port, this.target.host);
    const pair: [net.Socket, net.Socket] = [client, upstream];
    this.#pairs.add(pair);
    for (const socket of pair) {
      socket.on('close', () => this.#pairs.delete(pair));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
    client.resume();
  }

  /** Drops every packet from now on without closing anything: connections hang, new ones too. */
  stall(): void {
    this.#stalled = true;
    for (const [client, upstream] of this.#pairs) {
      client.unpipe(upstream);
      upstream.unpipe(client);
      client.pause();
      upstream.pause();
    }
  }

  /** The link is back: what waited is delivered, and new connections are forwarded. */
  resume(): void {
    this.#stalled = false;
    for (const [client, upstream] of this.#pairs) {
      client.pipe(upstream).pipe(client);
      client.resume();
      upstream.resume();
    }
    for (const client of this.#waiting) this.#forward(client);
    this.#waiting.clear();
  }

  async stop(): Promise<void> {
    for (const pair of this.#pairs) for (const socket of pair) socket.destroy();
    for (const socket of this.#waiting) socket.destroy();
    const server = this.#server;
    this.#server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
