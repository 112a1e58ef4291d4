// `npm test`'s runner: every test file, two at a time, then the few that measure time alone.
//
// Each test file builds its own app over its own database (an in-memory PGlite, or a scratch
// database on the server DATABASE_URL names) and listens only on ports the system picks, so
// files are independent and run in parallel. The files below compare durations (a reply's time
// against another's, an answer within a deadline), which another file's load on the machine's
// cores would skew: they run after the rest, one at a time.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';

const MEASURE_TIME = [
  'test/auth/auth.test.ts',
  'test/auth/password-reset-timing.test.ts',
  'test/http/database-outage.test.ts',
  'test/http/hardening.test.ts',
  'test/http/rate-limits.test.ts',
];

// The test files one or two folders down (test/x.test.ts, test/area/x.test.ts), as the shell would expand them
// (fs.globSync is missing from Node 20, which this machine and CI still run besides 24).
function testFiles() {
  const files = [];
  for (const entry of readdirSync('test', { withFileTypes: true })) {
    if (entry.isFile() && entry.name.endsWith('.test.ts')) files.push(`test/${entry.name}`);
    if (entry.isDirectory()) {
      for (const name of readdirSync(`test/${entry.name}`)) if (name.endsWith('.test.ts')) files.push(`test/${entry.name}/${name}`);
    }
  }
  return files;
}

const requested = process.argv.slice(2);
const all = (requested.length > 0 ? requested : testFiles()).sort();
const alone = all.filter((file) => MEASURE_TIME.includes(file));
const together = all.filter((file) => !MEASURE_TIME.includes(file));
const concurrency = Number(process.env.TEST_CONCURRENCY ?? Math.max(1, Math.min(2, availableParallelism())));

function run(files, filesAtOnce) {
  if (files.length === 0) return 0;
  const { status, signal } = spawnSync(
    process.execPath,
    ['--import', 'tsx', '--test', '--test-reporter=spec', `--test-concurrency=${filesAtOnce}`, '--test-timeout=300000', ...files],
    { stdio: 'inherit' },
  );
  return signal ? 1 : (status ?? 1);
}

const started = Date.now();
console.log(`== ${together.length} test files, ${concurrency} at a time ==`);
const first = run(together, concurrency);
console.log(`== ${alone.length} test files that measure time, one at a time ==`);
const second = run(alone, 1);
const minutes = ((Date.now() - started) / 60_000).toFixed(1);
console.log(`== ${first === 0 && second === 0 ? 'all passed' : 'FAILED'} in ${minutes} min ==`);
process.exit(first === 0 && second === 0 ? 0 : 1);
