/**
 * `npm run check:layers`: checks how the folders of src/ import each other. The ground floors
 * (db, http, jobs, config.ts) import no area; shared services (events, mail, sessions) import
 * only the ground; areas import the ground, the services and the areas listed as below them;
 * no two folders import each other, directly or round a circle. A route file (`*-routes.ts`)
 * takes nothing but types from db/ and nothing at all from jobs/ (the runner and its queues hold
 * the database): its way to the database is its request's admission. A repository
 * (`*-repository.ts`, its area's SQL) is imported only from its own folder: another area calls the
 * owner's service, which hands on what others may use, so every write to a table is its owner's;
 * the few exceptions are listed below with why. Prints the folder graph.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const SOURCE = path.resolve(import.meta.dirname, '..', 'src');
const GROUND = new Set(['db', 'http', 'jobs', 'config', 'tracing', 'url-redaction', 'message-catalogue']);
const SERVICES = new Set(['events', 'mail', 'sessions']);
/** Areas an area may use besides the ground and the services. */
const AREA_MAY_USE: Record<string, string[]> = {
  auth: ['users', 'mfa'],
  oauth: ['clients', 'users'],
  signin: ['auth', 'oauth', 'clients', 'users', 'mfa', 'federation'],
  // A sign-in with another provider finds, links or makes the user and ends as other sign-ins do (a second factor).
  federation: ['users', 'mfa'],
  imports: ['variants', 'inventory'],
  mfa: ['users'],
  privacy: ['users', 'mfa', 'inventory', 'federation'],
  variants: ['inventory'],
};
const COMPOSITION_ROOTS = new Set(['app', 'server']);
/**
 * Repositories imported from another folder, `importer -> repository`, each with why. All are a
 * route's read of another owner's rows that it hands its admission as a statement (a `callerRead`
 * shape run beside the caller, or a page for `readPage`): the shape is the owner's, in its
 * repository, so queries/ shows it with the owner's SQL; the route only runs it, and writes nothing.
 */
const REPOSITORY_IMPORTS_ALLOWED: Record<string, string> = {
  'auth/auth-routes.ts -> sessions/refresh-token-repository.ts': 'refresh reads the token it rotates in the admission\'s transaction',
  'auth/session-routes.ts -> sessions/session-repository.ts': "the caller's own sessions, a page beside the caller",
  'auth/signing-key-routes.ts -> sessions/signing-key-repository.ts': 'the live signing keys, a page beside the caller',
  'mfa/mfa-routes.ts -> users/user-repository.ts': "the caller's own user row beside the caller (userById)",
  'oauth/userinfo-routes.ts -> users/user-repository.ts': "the app's user's own row beside the caller (userById)",
  'privacy/privacy-routes.ts -> users/user-repository.ts': 'the user to export or erase, beside the caller (userById, userRecordById)',
  'users/user-session-routes.ts -> sessions/session-repository.ts': "a user's active sessions, read for an admin once admitted",
  'variants/variant-stock-routes.ts -> inventory/stock-movement-repository.ts': "a variant's movements, a page once the variant is found",
  'variants/variant-stock-routes.ts -> inventory/stock-repository.ts': 'whether the variant exists, beside the caller (variantKey)',
};

const files = readdirSync(SOURCE, { recursive: true, encoding: 'utf8' }).filter((file) => /\.tsx?$/.test(file));
const folderOf = (file: string) => {
  const [first, ...rest] = file.split(path.sep);
  return rest.length === 0 ? first!.replace(/\.(tsx?|js)$/, '') : first!;
};

const edges = new Map<string, Map<string, string[]>>();
/** `importer -> repository` of every repository imported from another folder. */
const repositoryImports: string[] = [];
for (const file of files) {
  const from = folderOf(file);
  const text = readFileSync(path.join(SOURCE, file), 'utf8');
  for (const match of text.matchAll(/(?:import|export)[^'"]*?from\s+'(\.{1,2}\/[^']+)'/g)) {
    const target = path.relative(SOURCE, path.resolve(path.dirname(path.join(SOURCE, file)), match[1]!));
    const to = folderOf(target);
    if (to === from) continue;
    if (/-repository\.js$/.test(target)) repositoryImports.push(`${file} -> ${target.replace(/\.js$/, '.ts')}`);
    const targets = edges.get(from) ?? new Map<string, string[]>();
    targets.set(to, [...(targets.get(to) ?? []), file]);
    edges.set(from, targets);
  }
}

const problems: string[] = [];
for (const file of files.filter((candidate) => candidate.endsWith('-routes.ts'))) {
  const text = readFileSync(path.join(SOURCE, file), 'utf8');
  for (const match of text.matchAll(/^import (?!type )[^;]*from '(\.\.\/db\/[^']+)'/gm)) {
    problems.push(`${file} imports ${match[1]} for more than its types: a route reaches the database through request.access`);
  }
  for (const match of text.matchAll(/^import [^;]*from '(\.\.\/jobs\/[^']+)'/gm)) {
    problems.push(`${file} imports ${match[1]}: background work is added by its area's plugin, which hands a route only what it needs (a wake-up)`);
  }
}
for (const repositoryImport of repositoryImports) {
  if (!(repositoryImport.split(path.sep).join('/') in REPOSITORY_IMPORTS_ALLOWED)) {
    problems.push(`${repositoryImport}: a repository is its own area's; call the owner's service (or list the exception, with why)`);
  }
}
const listedImports = new Set(repositoryImports.map((repositoryImport) => repositoryImport.split(path.sep).join('/')));
for (const listed of Object.keys(REPOSITORY_IMPORTS_ALLOWED)) {
  if (!listedImports.has(listed)) problems.push(`${listed} is listed as an exception but no longer imported: take it off the list`);
}
const allowed = (from: string, to: string) => {
  if (COMPOSITION_ROOTS.has(from)) return true;
  if (COMPOSITION_ROOTS.has(to)) return false;
  if (GROUND.has(from)) return GROUND.has(to);
  if (SERVICES.has(from)) return GROUND.has(to) || SERVICES.has(to);
  return GROUND.has(to) || SERVICES.has(to) || (AREA_MAY_USE[from] ?? []).includes(to);
};
for (const [from, targets] of edges) {
  for (const [to, importers] of targets) {
    if (!allowed(from, to)) problems.push(`${from} may not import ${to} (${importers.join(', ')})`);
  }
}

// Any circle between folders, even between two that may use each other's floor.
const visiting = new Set<string>();
const done = new Set<string>();
const visit = (folder: string, trail: string[]) => {
  if (visiting.has(folder)) {
    problems.push(`circle: ${[...trail.slice(trail.indexOf(folder)), folder].join(' -> ')}`);
    return;
  }
  if (done.has(folder)) return;
  visiting.add(folder);
  for (const to of edges.get(folder)?.keys() ?? []) visit(to, [...trail, folder]);
  visiting.delete(folder);
  done.add(folder);
};
for (const folder of edges.keys()) visit(folder, []);

for (const [from, targets] of [...edges].sort(([a], [b]) => a.localeCompare(b))) {
  console.log(`${from} -> ${[...targets.keys()].sort().join(', ')}`);
}
if (problems.length > 0) {
  for (const problem of problems) console.error(`layering: ${problem}`);
  process.exit(1);
}
console.log('layering: ok');
