// 8 `manifest` processes started at once on one git root (a local bare repository over file://), on one cache
// (cold, then warm) and, for comparison, each on a cache of its own (what "each process fetches into a repository
// of its own" costs). Prints exit codes, distinct commits served, packs downloaded and wall time. Needs `npm run
// build`. Usage: node bench/git-shared-cache.mjs [processes=8] [skills=200]
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const BIN = path.resolve(import.meta.dirname, '..', 'bin', 'skills-serve.js');
const processes = Number(process.argv[2] ?? 8);
const skills = Number(process.argv[3] ?? 200);
const work = mkdtempSync(path.join(os.tmpdir(), 'shared-cache-'));
const env = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };
const git = (cwd, ...args) => execFileSync('git', args, { cwd, env, stdio: 'pipe' }).toString().trim();

const bare = path.join(work, 'skills.git');
const tree = path.join(work, 'work');
git(work, 'init', '-q', '--bare', '-b', 'main', bare);
git(work, 'init', '-q', '-b', 'main', tree);
for (let i = 0; i < skills; i++) {
  mkdirSync(path.join(tree, 'skills', `s${i}`), { recursive: true });
  writeFileSync(
    path.join(tree, 'skills', `s${i}`, 'SKILL.md'),
    `---\nname: s${i}\ndescription: Skill ${i}.\n---\n${'body\n'.repeat(50)}`,
  );
}
git(tree, 'add', '-A');
git(tree, '-c', 'user.name=b', '-c', 'user.email=b@b', 'commit', '-qm', 'skills');
git(tree, 'push', '-q', bare, 'main');
const root = `git+${pathToFileURL(bare).href}#main:skills`;

function run(cacheOf) {
  const started = performance.now();
  return Promise.all(
    Array.from({ length: processes }, (_, i) => {
      const child = spawn(process.execPath, [BIN, 'manifest', root, '--cache-dir', cacheOf(i)], {
        env: { PATH: process.env.PATH, HOME: process.env.HOME },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk) => (stdout += chunk));
      child.stderr.on('data', (chunk) => (stderr += chunk));
      return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
    }),
  ).then((runs) => {
    const ms = Math.round(performance.now() - started);
    const commits = new Set(runs.flatMap((r) => [...r.stdout.matchAll(/"commit": "([0-9a-f]+)"/gu)].map((m) => m[1])));
    const failures = runs.filter((r) => r.code !== 0).map((r) => r.stderr.trim().split('\n').at(-1)?.slice(0, 200));
    return { codes: runs.map((r) => r.code).join(','), commits: commits.size, ms, failures };
  });
}

function packs(cache) {
  const remotes = readdirSync(path.join(cache, 'git'));
  return remotes.reduce(
    (n, dir) =>
      n +
      readdirSync(path.join(cache, 'git', dir, 'repo.git', 'objects', 'pack')).filter((f) => f.endsWith('.pack'))
        .length,
    0,
  );
}

const shared = path.join(work, 'cache');
const cold = await run(() => shared);
console.log(`one cache, cold: exit ${cold.codes}; ${cold.commits} commit(s); ${packs(shared)} pack(s); ${cold.ms} ms`);
for (const failure of cold.failures) console.log(`  ${failure}`);
const warm = await run(() => shared);
console.log(`one cache, warm: exit ${warm.codes}; ${warm.commits} commit(s); ${packs(shared)} pack(s); ${warm.ms} ms`);
const own = await run((i) => path.join(work, `own-${i}`));
const ownPacks = Array.from({ length: processes }, (_, i) => packs(path.join(work, `own-${i}`))).reduce(
  (a, b) => a + b,
);
console.log(`a cache each, cold: exit ${own.codes}; ${own.commits} commit(s); ${ownPacks} pack(s); ${own.ms} ms`);
rmSync(work, { recursive: true, force: true });
