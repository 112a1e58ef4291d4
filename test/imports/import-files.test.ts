import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parse } from 'csv-parse/sync';
import { FileProblem, rowsOf, type FileRow } from '../../src/imports/import-files.js';

async function* onePiece(text: string): AsyncGenerator<Uint8Array> {
  yield new TextEncoder().encode(text);
}

async function allRows(format: 'csv' | 'jsonl', text: string): Promise<FileRow[]> {
  const rows: FileRow[] = [];
  for await (const row of rowsOf(format, onePiece(text), new Set())) rows.push(row);
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
    // 48 KiB of two-byte characters: across four slices, and within a row's 64 KiB.
    const long = { sku: 'LONG', name: 'ü'.repeat(1.5 * SLICE_BYTES) };
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

async function* failingAfter(text: string, error: Error): AsyncGenerator<Uint8Array> {
  yield new TextEncoder().encode(text);
  throw error;
}

/** API.md section 17, "Imports are bounded", and what issue 51 found reading files. */
describe('import files: bounds', () => {
  it('fails a CSV header of 400,000 attributes.<key> columns at line 1, before any row is built', async () => {
    const header = ['sku', ...Array.from({ length: 400_000 }, (_, index) => `attributes.k${index}`)].join(',');
    const row = `S-1${','.repeat(400_000)}`;
    const text = `${header}\n${row}\n${row}\n${row}\n`;
    assert.ok(byteLength(text) > 7 * 1024 * 1024, 'a 7 MiB file, as the report had');
    const started = performance.now();
    await assert.rejects(allRows('csv', text), (error: FileProblem) => {
      assert.ok(error instanceof FileProblem);
      assert.equal(error.line, 1);
      assert.equal(error.message, 'the header has 400001 columns: at most 200');
      return true;
    });
    assert.ok(performance.now() - started < 10_000, 'read at the pace of the file, not of 400,000 cells a row');
  });

  it('fails a header of more attributes.<key> columns than a variant holds keys (20), or of more than 200 columns, at line 1', async () => {
    const attributes = (count: number) => Array.from({ length: count }, (_, index) => `attributes.k${index}`);
    assert.equal((await allRows('csv', `sku,${attributes(20).join(',')}\nS-1${','.repeat(20)}\n`)).length, 1, '20 attribute columns are allowed');
    await assert.rejects(allRows('csv', `sku,${attributes(21).join(',')}\nS-1\n`), { line: 1, message: 'the header has 21 attributes.<key> columns: a variant holds at most 20 attribute keys' });
    const many = ['sku', ...Array.from({ length: 200 }, (_, index) => `column${index}`)].join(',');
    await assert.rejects(allRows('csv', `${many}\nS-1\n`), { line: 1, message: 'the header has 201 columns: at most 200' });
  });

  it('fails a header whose column name holds a NUL character at line 1, in words the database can store', async () => {
    await assert.rejects(allRows('csv', 'sku,attributes.\u0000\nS-1,x\n'), { line: 1, message: 'a column name must not contain a NUL character' });
    await assert.rejects(allRows('csv', 'sku,colour\u0000\nS-1,x\n'), { line: 1, message: 'a column name must not contain a NUL character' });
  });

  it('fails a row over 64 KiB alone, unread, in CSV and in JSON lines; the rows after it are read', async () => {
    const big = 'x'.repeat(64 * 1024);
    const csv = await allRows('csv', `sku,name\nS-1,small\nS-2,"${big}\nstill the name"\nS-3,small\n`);
    assert.deepEqual(csv.map((row) => [row.line, row.unreadable]), [[2, undefined], [3, 'is over 64 KiB'], [5, undefined]]);
    assert.deepEqual(csv[1]!.source, {}, 'its cells are not kept');
    const jsonl = await allRows('jsonl', [JSON.stringify({ sku: 'J-1' }), JSON.stringify({ sku: 'J-2', name: big }), JSON.stringify({ sku: 'J-3' }), JSON.stringify({ sku: 'J-4', name: big })].join('\n'));
    assert.deepEqual(jsonl.map((row) => [row.line, row.unreadable]), [[1, undefined], [2, 'is over 64 KiB'], [3, undefined], [4, 'is over 64 KiB']]);
  });

  it('fails a JSON line nested deeper than 16 levels alone, unparsed', async () => {
    const deep = `${'['.repeat(30_000)}${']'.repeat(30_000)}`; // within 64 KiB, deeper than a recursion's stack
    const rows = await allRows('jsonl', `${deep}\n{"sku":"J-1","attributes":{"a":"[[[[[[[[[[[[[[[[[["}}\n`);
    assert.deepEqual(rows.map((row) => [row.line, row.unreadable]), [[1, 'nests arrays or objects more than 16 deep'], [2, undefined]]);
  });

  it('ends the rows with the error of a failed read, not a file problem and not an uncaught error (stream.pipeline, not pipe)', { timeout: 10_000 }, async () => {
    const lost = new Error('the database connection was lost');
    const read = async () => {
      for await (const _ of rowsOf('csv', failingAfter('sku,name\nS-1,a\nS-2,b\n', lost), new Set()));
    };
    await assert.rejects(read(), (error) => error === lost);
  });

  it('says what is wrong with broken CSV in its own words, not the parser\'s', async () => {
    await assert.rejects(allRows('csv', 'sku,name\nS-1,"open\n'), { message: 'not valid CSV: a quoted field is not closed before the end of the file' });
    await assert.rejects(allRows('csv', 'sku,name\nS-1,"a"b\n'), { line: 2, message: 'not valid CSV: a quoted field must end at a comma or a line break (a quote inside it is written twice)' });
  });
});
