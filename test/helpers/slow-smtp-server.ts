import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/**
 * A real SMTP server in the test process that answers the end of each message late (as a busy
 * mail server does), by `replyDelayMs(n)` on its n-th connection (from 1). Like a mail server,
 * it keeps a message only if it can still answer it: a connection closed before the answer is
 * due leaves nothing behind. `log` lists connections opening and closing, and mails kept, in
 * the order the server saw them (`open 1`, `kept 1`, `close 1`, ...; `dropped 1`: the answer came
 * due after its connection closed).
 */
export class SlowSmtpServer {
  readonly log: string[] = [];
  readonly kept: { connection: number; raw: string }[] = [];
  readonly #numbers = new Map<string, number>();
  readonly #closed = new Set<number>();
  #server: SMTPServer;

  constructor(replyDelayMs: (connection: number) => number) {
    this.#server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onConnect: (session, callback) => {
        const number = this.#numbers.size + 1;
        this.#numbers.set(session.id, number);
        this.log.push(`open ${number}`);
        callback();
      },
      onClose: (session) => {
        const number = this.#numbers.get(session.id)!;
        this.#closed.add(number);
        this.log.push(`close ${number}`);
      },
      onData: (stream, session, callback) => {
        const number = this.#numbers.get(session.id)!;
        let raw = '';
        stream.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
        stream.on('end', () => {
          setTimeout(() => {
            if (this.#closed.has(number)) {
              this.log.push(`dropped ${number}`);
              return;
            }
            this.kept.push({ connection: number, raw });
            this.log.push(`kept ${number}`);
            callback();
          }, replyDelayMs(number));
        });
      },
    });
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', () => resolve()));
    return `smtp://127.0.0.1:${(this.#server.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
