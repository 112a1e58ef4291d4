import assert from 'node:assert/strict';
import fs, { openSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import pino from 'pino';
import { logDestination } from '../../src/http/log-destination.js';

const flushed = (destination: { flush(callback: (error?: Error) => void): void }) =>
  new Promise<void>((resolve, reject) => destination.flush((error) => (error ? reject(error) : resolve())));

describe('the log destination', () => {
  for (const sharedWithOtherProcesses of [false, true]) {
    const most = sharedWithOtherProcesses ? 4096 : 16384;
    it(`writes whole lines, multi-byte text included, in order, at most ${most} bytes a write (${sharedWithOtherProcesses ? 'shared' : 'alone'})`, async (t) => {
      const directory = await mkdtemp(path.join(tmpdir(), 'log-destination-'));
      const file = path.join(directory, 'out.log');
      // The destination owns the descriptor from here on, as it owns stdout in the service: its
      // flush every second goes on writing to it, so it is left open until the process ends.
      const fd = openSync(file, 'a');
      // Watched, not replaced: every write still reaches the file.
      const writes = t.mock.method(fs, 'write');
      try {
        const destination = logDestination({ fd, sharedWithOtherProcesses });
        const logger = pino({ base: undefined, timestamp: false }, destination);
        // Lines whose byte lengths change, and whose UTF-8 is up to twice their length in characters.
        const names = ['plain', 'café', 'Ωmega', '😀'.repeat(300), 'x'.repeat(700)];
        for (let index = 0; index < 4000; index++) logger.info({ index, name: names[index % names.length] }, 'line');
        // A flush waits for the write under way; what is left then goes with the next (as with the
        // flush every second), so a few flushes write everything.
        let text = '';
        for (let flushes = 0; flushes < 10 && text.split('\n').length <= 4000; flushes++) {
          await flushed(destination);
          text = await readFile(file, 'utf8');
        }
        const lines = text.split('\n');
        assert.equal(lines.pop(), '', 'the text ends with a whole line');
        assert.equal(lines.length, 4000);
        lines.forEach((line, index) => assert.deepEqual(JSON.parse(line), { level: 30, index, name: names[index % names.length], msg: 'line' }));

        const written = writes.mock.calls.filter((call) => call.arguments[0] === fd).map((call) => call.arguments[1] as unknown as Buffer);
        assert.ok(written.length > 10, `${written.length} writes`);
        for (const bytes of written.filter((each) => each.length > 0)) {
          assert.ok(bytes.length <= most, `a write of ${bytes.length} bytes`);
          assert.equal(bytes.at(-1), 0x0a, 'a write ends with a whole line');
        }
        if (!sharedWithOtherProcesses) assert.ok(written.some((bytes) => bytes.length > 4096), 'a process alone writes more than 4 KiB at once');
      } finally {
        await rm(directory, { recursive: true, force: true });
      }
    });
  }
});
