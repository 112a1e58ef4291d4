import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface CaughtMail {
  to: string[];
  raw: string;
  /** The text of the message with quoted-printable soft breaks and escapes undone. */
  text: string;
}

const decodeQuotedPrintable = (text: string) =>
  text.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_match, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));

/** A real SMTP server in the test process that keeps every message it is given. */
export class SmtpCatcher {
  readonly mails: CaughtMail[] = [];
  #server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData: (stream, session, callback) => {
      let raw = '';
      stream.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
      stream.on('end', () => {
        this.mails.push({ to: session.envelope.rcptTo.map((recipient) => recipient.address), raw, text: decodeQuotedPrintable(raw) });
        callback();
      });
    },
  });

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', () => resolve()));
    return `smtp://127.0.0.1:${(this.#server.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  /** The token of the first link in the newest mail to `address` that matches `path`. */
  tokenFor(address: string, path: string): string | undefined {
    const mail = [...this.mails].reverse().find((candidate) => candidate.to.includes(address) && candidate.text.includes(path));
    return mail?.text.match(new RegExp(`${path.replace(/[/?#]/g, '\\$&')}\\?token=([A-Za-z0-9_-]{43})`))?.[1];
  }
}
