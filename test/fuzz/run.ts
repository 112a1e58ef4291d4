import { buildTestApp } from '../helpers/test-app.js';
import { fuzzRequests } from './fuzz-requests.js';
import { seedFuzzTargets } from './targets.js';

// `npm run fuzz [-- runs [seed]]`: the full run, against PGlite or DATABASE_URL's server.
const runs = Number(process.argv[2] ?? 10_000);
const seed = process.argv[3] === undefined ? Date.now() % 2 ** 31 : Number(process.argv[3]);
const testApp = await buildTestApp();
try {
  const targets = await seedFuzzTargets(testApp.app);
  const started = Date.now();
  const statusCounts = await fuzzRequests(testApp.app, targets, runs, seed);
  console.log(`fuzz: ${runs} generated requests passed in ${((Date.now() - started) / 1000).toFixed(1)} s (seed ${seed})`);
  const byStatus = [...statusCounts.entries()].sort(([a], [b]) => a - b).map(([status, count]) => `${status}: ${count}`);
  console.log(`replies by status: ${byStatus.join(', ')}`);
} finally {
  await testApp.close();
}
