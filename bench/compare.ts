/**
 * `npm run bench:compare [-- --rounds=3 --duration=5 --connections=16]`: the by-id read of the
 * service against the bare reference only, alternated round by round in one run (so both see
 * the same machine), on a scratch PostgreSQL database. Prints each round and the ratios of the
 * summed figures; for trying a change quickly. `npm run bench` gives the full picture.
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { createScratchDatabase } from '../test/helpers/scratch-database.js';
import { startService } from '../test/helpers/service-process.js';
import { formatTable, measure, type Figures } from './measure.js';
import { measureReference, pick, seed, serviceEnvironment } from './setup.js';

const { values: options } = parseArgs({
  options: { rounds: { type: 'string', default: '3' }, duration: { type: 'string', default: '5' }, connections: { type: 'string', default: '16' } },
});
const load = { connections: Number(options.connections), duration: Number(options.duration) };
/** CPU seconds a process has used so far (user + system), from /proc. */
async function cpuSeconds(pid: number): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).replace(/^.*\) /, '').split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

const scratch = await createScratchDatabase(process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres', 'compare');
try {
  const environment = await serviceEnvironment({ url: scratch.url });
  const service = await startService(environment, process.env.BENCH_SCRIPT ?? 'src/server.ts');
  const data = await seed(service.baseUrl);
  const ids = data.variants.map((variant) => variant.id);
  const rows: Figures[] = [];
  for (let round = 0; round < Number(options.rounds); round++) {
    rows.push(await measureReference(scratch.url, 'bare reference', ids, load));
    let cpuBefore = 0;
    const afterWarmUp = async () => void (cpuBefore = await cpuSeconds(service.child.pid!));
    rows.push(await measure(service.baseUrl, { name: 'GET /api/variants/{id}', path: () => `/api/variants/${pick(ids)}`, headers: data.auth }, { ...load, afterWarmUp }));
    const cpuPerRequest = ((await cpuSeconds(service.child.pid!)) - cpuBefore) / rows.at(-1)!.total;
    console.log(formatTable(rows.slice(-2)));
    console.log(`the service's own CPU: ${(cpuPerRequest * 1e6).toFixed(0)} µs a request`);
  }
  service.child.kill('SIGTERM');
  await service.exited;
  const sum = (name: string, pickFigure: (row: Figures) => number) => rows.filter((row) => row.name === name).reduce((total, row) => total + pickFigure(row), 0);
  const throughput = sum('GET /api/variants/{id}', (row) => row.requestsPerSecond) / sum('bare reference', (row) => row.requestsPerSecond);
  const p99 = sum('GET /api/variants/{id}', (row) => row.p99) / sum('bare reference', (row) => row.p99);
  console.log(`\nService / bare reference over ${options.rounds} rounds: throughput ${throughput.toFixed(2)}x (target >= 0.75x), p99 ${p99.toFixed(2)}x (target <= 1.5x).`);
} finally {
  await scratch.drop();
}
