import pino from 'pino';

/** What a pipe keeps whole (PIPE_BUF on Linux): no write of processes sharing stdout may exceed it. */
const PIPE_ATOMIC_BYTES = 4096;
/**
 * A process alone on its stdout writes up to four times as much at once. Every write is handed to
 * libuv's thread pool and back, which cost more of a by-id read than the line itself
 * (bench/README.md, 2026-11-28, second session).
 */
const ALONE_WRITE_BYTES = 4 * PIPE_ATOMIC_BYTES;
/** Lines waiting beyond this are dropped: a stalled log reader costs lines, not the process its memory. */
const MAX_PENDING_BYTES = 16 * 1024 * 1024;
const FLUSH_INTERVAL_MS = 1000;

/**
 * What pino needs of a destination: lines in, and the buffer written on demand (pino flushes it
 * synchronously after a `fatal` line and at exit). `flush` calls back once the write under way
 * is done, which may leave up to a write's worth for the next one.
 */
export interface LogDestination {
  write(line: string): boolean;
  flush(callback: (error?: Error) => void): void;
  flushSync(): void;
}

/**
 * Where log lines go: `fd` (stdout), without blocking the event loop. Lines gather in a buffer
 * written when it is nearly a write's worth and at least once a second. A write holds whole
 * lines; when other processes share the destination (cluster workers), a write of more than one
 * line is at most what a pipe keeps whole, so their lines never interleave (a single line longer
 * than that goes out alone, as one write). A process alone writes up to 16 KiB at once; on a
 * pipe, the one write that can then be cut in two is one under way when a `fatal` line or the
 * exit flushes the rest synchronously, which may land between its halves.
 *
 * Each line is taken as bytes (sonic-boom's buffer mode). Taken as text, sonic-boom measured the
 * UTF-8 length of the chunk it was filling again for every line, flattening it each time: the
 * work of a line grew with the chunk, and a larger write would have made every line dearer.
 */
export function logDestination(options: { fd: number; sharedWithOtherProcesses: boolean }): LogDestination {
  const writeBytes = options.sharedWithOtherProcesses ? PIPE_ATOMIC_BYTES : ALONE_WRITE_BYTES;
  const buffered = pino.destination({
    dest: options.fd,
    sync: false,
    contentMode: 'buffer',
    // Written once the buffer is within 512 bytes of a full write (an access line is about 300).
    minLength: writeBytes - 512,
    maxWrite: writeBytes,
    maxLength: MAX_PENDING_BYTES,
    periodicFlush: FLUSH_INTERVAL_MS,
  });
  return {
    // sonic-boom's types know only text; in buffer mode its write takes bytes.
    write: (line) => buffered.write(Buffer.from(line) as unknown as string),
    flush: (callback) => buffered.flush(callback),
    flushSync: () => buffered.flushSync(),
  };
}
