// `npm start` runs this first: it builds the service (tsc) and the console (vite) only when the
// sources differ from those of the last build, so a restart takes a second, not the 20 to 46 s
// a full build took. The sources are compared by content (a hash), not by time, so files
// unpacked with old times or a clock that moved cannot leave a stale build. Plain JavaScript
// with node's own modules: it runs before anything is compiled.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const stampFile = path.join(root, 'dist', '.source-hash');
const SOURCES = ['src', 'admin', 'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json'];
const OUTPUTS = [path.join(root, 'dist', 'server.js'), path.join(root, 'admin', 'dist', 'index.html')];

function addTo(hash, entry) {
  const full = path.join(root, entry);
  if (!existsSync(full)) return;
  if (!statSync(full).isDirectory()) {
    hash.update(`${entry}\0`).update(readFileSync(full)).update('\0');
    return;
  }
  for (const child of readdirSync(full).sort()) {
    if (child !== 'dist' && child !== 'node_modules') addTo(hash, path.join(entry, child));
  }
}

const hash = createHash('sha256');
for (const entry of SOURCES) addTo(hash, entry);
const sources = hash.digest('hex');
const built = OUTPUTS.every((file) => existsSync(file)) && existsSync(stampFile) ? readFileSync(stampFile, 'utf8') : '';
if (sources !== built) {
  process.stderr.write('Building the service and the console (the sources changed since the last build)...\n');
  // npm's own script (npm_execpath) under this node: no shell, so it works on every platform.
  const npm = process.env.npm_execpath;
  if (npm) execFileSync(process.execPath, [npm, 'run', 'build'], { cwd: root, stdio: 'inherit' });
  else execFileSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit', shell: true });
  writeFileSync(stampFile, sources);
}
