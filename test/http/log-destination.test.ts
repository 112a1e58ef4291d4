import assert from 'node:assert/strict';
import { closeSync, openSync } from 'node:fs';
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
    it(`writes every line whole and in order, multi-byte text included, over many writes (${sharedWithOtherProcesses ? 'shared' : 'alone'})`, async () => {
      const directory = await mkdtemp(path.join(tmpdir(), 'log-destination-'));
      const file = path.join(directory, 'out.log');
      const fd = openSync(file, 'a');
      try {
        const destination = logDestination({ fd, sharedWithOtherProcesses });
        const logger = pino({ base: undefined, timestamp: false }, destination);
        // About 400 KB: dozens of writes of either size, with lines of changing byte lengths.
        const names = ['plain', 'café', 'Ωmega', '😀 and more', 'x'.repeat(700)];
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
      } finally {
        closeSync(fd);
        await rm(directory, { recursive: true, force: true });
      }
    });
  }
});
