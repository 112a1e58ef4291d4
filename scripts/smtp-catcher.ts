/**
 * `npm run smtp-catcher`: an SMTP server for development on 127.0.0.1:1025 that prints every
 * mail the service sends (the reset and verification links among them). Start the service
 * with SMTP_URL=smtp://127.0.0.1:1025.
 */
import { SMTPServer } from 'smtp-server';

const port = Number(process.env.SMTP_CATCHER_PORT ?? 1025);
const server = new SMTPServer({
  authOptional: true,
  disabledCommands: ['STARTTLS'],
  logger: false,
  onData: (stream, session, callback) => {
    let raw = '';
    stream.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
    stream.on('end', () => {
      const text = raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_match, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
      console.log(`--- mail to ${session.envelope.rcptTo.map((recipient) => recipient.address).join(', ')}\n${text}\n`);
      callback();
    });
  },
});
server.listen(port, '127.0.0.1', () => console.log(`catching mail on smtp://127.0.0.1:${port}`));
