import net from 'node:net';

/**
 * Sends bytes as they are (a malformed request line, a bare CR, a header block over the
 * limit) and returns everything the server wrote before it closed the connection.
 */
export function rawRequest(port: number, bytes: string, options: { keepOpenMs?: number } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let received = '';
    socket.on('data', (chunk) => (received += chunk.toString('latin1')));
    socket.on('error', (error) => (received ? resolve(received) : reject(error)));
    socket.on('close', () => resolve(received));
    socket.write(bytes);
    if (options.keepOpenMs === undefined) return;
    setTimeout(() => socket.destroy(), options.keepOpenMs);
  });
}

/** The status, headers (lower-cased names) and body of one raw HTTP/1.1 reply. */
export function parseRawReply(reply: string): { status: number; headers: Record<string, string>; body: string } {
  const [head = '', ...rest] = reply.split('\r\n\r\n');
  const [statusLine = '', ...headerLines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n') };
}
