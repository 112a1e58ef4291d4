/**
 * `npm run bench:compare [-- --rounds=3 --duration=5 --connections=16 --log-level=info]`: the by-id
 * read of the service against the bare reference, alternated round by round in one run (so both
 * see the same machine), a new process of each every round, on a scratch PostgreSQL database.
 * Prints each round and the ratios of the summed rounds; for trying a change quickly. `npm run
 * bench` gives the full picture.
 */
import { parseArgs } from 'node:util';
import { createScratchDatabase } from '../test/helpers/scratch-database.js';
import { formatTable } from './measure.js';
import { compareWithReference, seed, serviceEnvironment, startBenchService } from './setup.js';

const { values: options } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '16' },
    // The service's LOG_LEVEL (its default, info, unless given), to see what the log costs.
    'log-level': { type: 'string', default: 'info' },
  },
});
const load = { connections: Number(options.connections), duration: Number(options.duration) };
const scratch = await createScratchDatabase(process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres', 'compare');
try {
  const environment = { ...(await serviceEnvironment({ url: scratch.url })), LOG_LEVEL: options['log-level'] };
  const seeder = await startBenchService(environment);
  const data = await seed(seeder.baseUrl);
  seeder.child.kill('SIGTERM');
  await seeder.exited;
  const comparison = await compareWithReference(environment, scratch.url, data, load, Number(options.rounds));
  for (const round of comparison.rounds) {
    console.log(formatTable([round.reference, round.service]));
    console.log(`own CPU a request: the service ${round.serviceCpuMicroseconds.toFixed(0)} µs, the reference ${round.referenceCpuMicroseconds.toFixed(0)} µs\n`);
  }
  console.log(`Service / bare reference over ${options.rounds} rounds: throughput ${comparison.throughput.toFixed(2)}x (target >= 0.75x), p99 ${comparison.p99.toFixed(2)}x (target <= 1.5x).`);
} finally {
  await scratch.drop();
}
