/**
 * `node scripts/on-supported-node.mjs <command> [arguments...]`: runs the command under a Node.js
 * that package.json's `engines` supports: this one if it is, else the newest supported line from
 * the npm registry's `node` package (as CI runs the tests under Node.js 24). The benchmarks go
 * through it: their figures are of the service as it is meant to run, on the runtime its users
 * have, not on whatever Node.js the machine has (this one's is 20, past its end of life). Alternated
 * runs of 20 against 24 differed by no more than the machine's noise (bench/README.md, 2026-11-28).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

const { engines } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
// `^22.12.0 || ^24.0.0`: each range's lowest version; the running one qualifies if its major
// line is one of them, at or above that range's lowest version.
const ranges = [...engines.node.matchAll(/\^(\d+)\.(\d+)\.(\d+)/g)].map((match) => match.slice(1).map(Number));
const running = process.versions.node.split('.').map(Number);
const supported = ranges.some(([major, minor, patch]) => running[0] === major && (running[1] > minor || (running[1] === minor && running[2] >= patch)));
const newest = Math.max(...ranges.map(([major]) => major));

const [command, ...commandArguments] = process.argv.slice(2);
if (!command) {
  process.stderr.write('usage: node scripts/on-supported-node.mjs <command> [arguments...]\n');
  process.exit(2);
}
if (!supported) process.stderr.write(`Node.js ${process.versions.node} is not one package.json supports (${engines.node}); running under node@${newest} from the npm registry.\n`);
const [program, programArguments] = supported ? [command, commandArguments] : ['npx', ['--yes', '--package', `node@${newest}`, '--', command, ...commandArguments]];
// The qualifying Node.js first on PATH, so that a command started through `#!/usr/bin/env node`
// (tsx) runs under it, not under another Node.js the PATH names first.
const environment = supported ? { ...process.env, PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}` } : process.env;
const result = spawnSync(program, programArguments, { stdio: 'inherit', env: environment });
if (result.error) throw result.error;
process.exit(result.status ?? 1);
