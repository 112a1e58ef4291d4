import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parse } from 'csv-parse/sync';
import { rowsOf, type FileRow } from '../../src/imports/import-files.js';

async function* onePiece(text: string): AsyncGenerator<Uint8Array> {
  yield new TextEncoder().encode(text);
}

async function allRows(format: 'csv' | 'jsonl', text: string): Promise<FileRow[]> {
  const rows: FileRow[] = [];
  for await (const row of rowsOf(format, onePiece(text))) rows.push(row);
  return rows;
}

/** Rows whose names hold characters of two to four bytes and quoted newlines, so slices cut through both. */
function awkwardCsv(rows: number): string {
  const lines = ['sku,name,attributes.note'];
  for (let index = 0; index < rows; index++) lines.push(`S-${index},"Füße ${index} 😀, ""€""\nzweite Zeile",ü${'é'.repeat(index % 7)}`);
  return `${lines.join('\r\n')}\r\n`;
}

/** How often the event loop got a turn while `work` ran: a counter on setImmediate. */
async function turnsDuring(work: () => Promise<unknown>): Promise<number> {
  let turns = 0;
  let running = true;
  const tick = () => {
    if (!running) return;
    turns += 1;
    setImmediate(tick);
  };
  setImmediate(tick);
  await work();
  running = false;
  return turns;
}

const SLICE_BYTES = 16 * 1024;
const byteLength = (text: string) => new TextEncoder().encode(text).byteLength;

/**
 * `head`, a filler line and `tail`, the filler sized so that it (its line break included) ends
 * at byte `fillerEndsAt`: just before the first slice's end puts the tail's first character across
 * it, just after puts the filler's CRLF across it.
 */
function across(head: string, filler: (text: string) => string, tail: string, fillerEndsAt: number): string {
  const filled = head + filler('x'.repeat(fillerEndsAt - byteLength(head) - byteLength(filler(''))));
  assert.equal(byteLength(filled), fillerEndsAt);
  return filled + tail;
}

describe('import files: read a slice at a time', () => {
  it('reads CSV rows whose characters and CRLF fall across the end of a slice, after a BOM, on the right lines', async () => {
    const head = '\uFEFFsku,name\r\n';
    const filler = (text: string) => `FILL,"${text}"\r\n`;
    const tail = '€-1,"Füße ""€""\r\nzweite"\r\nS-2,ü\r\n';
    for (const fillerEndsAt of [SLICE_BYTES - 1, SLICE_BYTES + 1]) {
      const text = across(head, filler, tail, fillerEndsAt);
      const rows = await allRows('csv', text);
      assert.deepEqual(rows.map((row) => row.source), parse(text, { columns: true, bom: true }), `filler ending at byte ${fillerEndsAt}`);
      assert.deepEqual(rows.map((row) => (row.source as { sku: string }).sku), ['FILL', '€-1', 'S-2']);
      assert.deepEqual(rows.map((row) => row.line), [2, 3, 5]);
    }
  });

  it('reads JSON lines whose characters and CRLF fall across the end of a slice, and a line longer than many slices', async () => {
    const filler = (text: string) => `${JSON.stringify({ sku: 'FILL', name: text })}\r\n`;
    const long = { sku: 'LONG', name: 'ü'.repeat(5 * SLICE_BYTES) };
    const tail = `${JSON.stringify({ sku: '€-1', name: 'Füße' })}\r\n\r\n${JSON.stringify(long)}\n${JSON.stringify({ sku: 'LAST' })}`;
    for (const fillerEndsAt of [SLICE_BYTES - 1, SLICE_BYTES + 1]) {
      const rows = await allRows('jsonl', across('', filler, tail, fillerEndsAt));
      assert.deepEqual(rows.map((row) => (row.source as { sku: string }).sku), ['FILL', '€-1', 'LONG', 'LAST'], `filler ending at byte ${fillerEndsAt}`);
      assert.deepEqual(rows[1]!.source, { sku: '€-1', name: 'Füße' });
      assert.deepEqual(rows[2]!.source, long);
      assert.deepEqual(rows.map((row) => row.line), [1, 2, 4, 5], 'the blank line counts');
    }
  });

  it('reads every CSV row as a parser given the whole file does, where slices cut through characters and quoted newlines', async () => {
    const text = awkwardCsv(3000);
    assert.ok(byteLength(text) > 8 * SLICE_BYTES, 'many slices');
    const rows = await allRows('csv', text);
    const expected = parse(text, { columns: true }) as Record<string, string>[];
    assert.equal(rows.length, expected.length);
    assert.deepEqual(rows.map((row) => row.source), expected);
    assert.deepEqual(rows.slice(0, 3).map((row) => row.line), [2, 4, 6], 'each row two lines on from the one before');
    assert.equal(rows.at(-1)!.line, 2 + 2 * 2999);
  });

  it('reads every JSON line where slices cut through characters', async () => {
    const values = Array.from({ length: 3000 }, (_, index) => ({ sku: `J-${index}`, name: `Grüße 😀 ${'€'.repeat(index % 5)}` }));
    const rows = await allRows('jsonl', `${values.map((value) => JSON.stringify(value)).join('\n')}\n`);
    assert.deepEqual(rows.map((row) => row.source), values);
  });

  it('lets the event loop turn while it parses a megabyte piece, so requests are served meanwhile', async () => {
    const text = awkwardCsv(15_000);
    const slices = Math.floor(byteLength(text) / SLICE_BYTES);
    const turns = await turnsDuring(() => allRows('csv', text));
    assert.ok(turns >= slices / 2, `${turns} turns of the event loop while ${slices} slices were parsed`);
  });
});
