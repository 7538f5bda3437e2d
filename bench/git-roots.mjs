#!/usr/bin/env node
// Git roots: how long GitRoot.start() takes to fetch (depth 1) and materialize a real tree, cold (empty cache) and
// warm (a pinned tag already cached), and what one branch poll with no change costs, over file:// and over smart HTTP
// on 127.0.0.1 (git http-backend behind the test bridge). Median of RUNS runs. With ISOMORPHIC_GIT_DIR set to a
// directory where `isomorphic-git` is installed (`npm i --prefix DIR isomorphic-git`), the same cold fetch is also
// done with isomorphic-git's clone({ depth: 1, singleBranch: true }) over HTTP (it has no file:// transport), in a
// child process so its peak memory can be read.
//
//   node bench/git-roots.mjs [skills-dir] [runs]
//
// Trees: the skills directory once ("x1"), and ten copies of it whose every file differs by one line ("x10").
import { execFileSync, spawn } from 'node:child_process';
import { appendFileSync, cpSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { build } from 'esbuild';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const SKILLS = path.resolve(process.argv[2] ?? '/work/shared/corpora/anthropics-skills/skills');
const RUNS = Number(process.argv[3] ?? 5);
const work = mkdtempSync(path.join(os.tmpdir(), 'skills-serve-bench-git-'));
const env = {
  PATH: process.env.PATH,
  HOME: work,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'b',
  GIT_AUTHOR_EMAIL: 'b@example.invalid',
  GIT_COMMITTER_NAME: 'b',
  GIT_COMMITTER_EMAIL: 'b@example.invalid',
};
const git = (cwd, ...args) =>
  execFileSync('git', args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] })
    .toString()
    .trim();

// The module under test and the HTTP bridge, bundled from the TypeScript sources.
const bundle = path.join(work, 'bench-git.mjs');
writeFileSync(
  path.join(work, 'entry.ts'),
  `export * from ${JSON.stringify(path.join(REPO, 'src/roots/git/root.ts'))};\nexport * from ${JSON.stringify(path.join(REPO, 'src/roots/root-arg.ts'))};\nexport * from ${JSON.stringify(path.join(REPO, 'src/roots/git/settings.ts'))};\nexport * from ${JSON.stringify(path.join(REPO, 'test/helpers/git-http.ts'))};\n`,
);
await build({
  entryPoints: [path.join(work, 'entry.ts')],
  outfile: bundle,
  bundle: true,
  platform: 'node',
  format: 'esm',
  logLevel: 'warning',
});
const { GitRoot, parseSourceArg, startGitHttp, DEFAULT_GIT_LIMITS, DEFAULT_GIT_POLL_MS } = await import(
  pathToFileURL(bundle).href
);
/** What the command line gives every git root by default. */
const SETTINGS = { pollMs: DEFAULT_GIT_POLL_MS, limits: DEFAULT_GIT_LIMITS };

function filesUnder(dir) {
  let count = 0;
  let bytes = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    count += 1;
    bytes += statSync(path.join(entry.parentPath ?? entry.path, entry.name)).size;
  }
  return { count, bytes };
}

/** Makes `<work>/repos/<name>.git` holding `copies` copies of the skills tree, tagged v1. */
function makeRepo(name, copies) {
  const tree = path.join(work, `tree-${name}`);
  for (let index = 0; index < copies; index++) {
    const dir = path.join(tree, `copy${index}`);
    cpSync(SKILLS, dir, { recursive: true });
    if (copies > 1) {
      for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
        if (entry.isFile()) appendFileSync(path.join(entry.parentPath ?? entry.path, entry.name), `\ncopy ${index}\n`);
      }
    }
  }
  const size = filesUnder(tree);
  git(tree, 'init', '-q', '-b', 'main');
  git(tree, 'add', '-A');
  git(tree, 'commit', '-qm', 'tree');
  git(tree, 'tag', 'v1');
  const bare = path.join(work, 'repos', `${name}.git`);
  git(work, 'clone', '-q', '--bare', tree, bare);
  return { name, bare, ...size };
}

/** Runs a command to its end without blocking this process's event loop. */
function runAsync(command, args) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const spec = (url, suffix) => parseSourceArg(`git+${url}#${suffix}`, '/').git;

const repos = [makeRepo('x1', 1), makeRepo('x10', 10)];
const server = await startGitHttp(path.join(work, 'repos'));
const rows = [];
for (const repo of repos) {
  for (const [transport, url] of [
    ['file', pathToFileURL(repo.bare).href],
    ['http', `${server.base}/${repo.name}.git`],
  ]) {
    const cold = [];
    const warm = [];
    const poll = [];
    for (let run = 0; run < RUNS; run++) {
      const cacheDir = mkdtempSync(path.join(work, 'cache-'));
      let started = performance.now();
      const root = new GitRoot({ spec: spec(url, 'v1'), cacheDir, env, ...SETTINGS });
      await root.start();
      cold.push(performance.now() - started);
      await root.stop();
      started = performance.now();
      const again = new GitRoot({ spec: spec(url, 'v1'), cacheDir, env, ...SETTINGS });
      await again.start();
      warm.push(performance.now() - started);
      await again.stop();
      const branch = new GitRoot({ spec: spec(url, 'main'), cacheDir, env, ...SETTINGS });
      await branch.start();
      started = performance.now();
      await branch.pollNow();
      poll.push(performance.now() - started);
      await branch.stop();
      rmSync(cacheDir, { recursive: true, force: true });
    }
    rows.push({
      tree: repo.name,
      files: repo.count,
      bytes: repo.bytes,
      impl: 'system git',
      transport,
      coldMs: median(cold),
      warmMs: median(warm),
      pollMs: median(poll),
    });
  }
  if (process.env.ISOMORPHIC_GIT_DIR !== undefined) {
    const script = path.join(work, 'iso.mjs');
    writeFileSync(
      script,
      `import git from ${JSON.stringify(pathToFileURL(path.join(process.env.ISOMORPHIC_GIT_DIR, 'node_modules/isomorphic-git/index.js')).href)};
import http from ${JSON.stringify(pathToFileURL(path.join(process.env.ISOMORPHIC_GIT_DIR, 'node_modules/isomorphic-git/http/node/index.js')).href)};
import fs from 'node:fs';
const started = performance.now();
await git.clone({ fs, http, dir: process.argv[2], url: process.argv[3], ref: 'main', depth: 1, singleBranch: true });
console.log(JSON.stringify({ ms: performance.now() - started }));`,
    );
    const cold = [];
    const rss = [];
    for (let run = 0; run < RUNS; run++) {
      const dir = mkdtempSync(path.join(work, 'iso-'));
      // Asynchronously: the HTTP bridge answering the clone runs in this process.
      const result = await runAsync('/usr/bin/time', [
        '-f',
        '%M',
        process.execPath,
        script,
        dir,
        `${server.base}/${repo.name}.git`,
      ]);
      if (result.status !== 0) throw new Error(`isomorphic-git clone failed: ${result.stderr}`);
      cold.push(JSON.parse(result.stdout).ms);
      rss.push(Number(result.stderr.trim().split('\n').at(-1)) / 1024);
      rmSync(dir, { recursive: true, force: true });
    }
    rows.push({
      tree: repo.name,
      files: repo.count,
      bytes: repo.bytes,
      impl: 'isomorphic-git',
      transport: 'http',
      coldMs: median(cold),
      peakRssMiB: median(rss),
    });
  }
}
await server.close();
rmSync(work, { recursive: true, force: true });
console.log(
  `git ${execFileSync('git', ['--version'])
    .toString()
    .trim()
    .replace(/^git version /u, '')}, node ${process.version}, ${os.cpus().length} cores, median of ${RUNS}`,
);
console.table(
  rows.map((row) =>
    Object.fromEntries(
      Object.entries(row).map(([key, value]) => [
        key,
        typeof value === 'number' && !Number.isInteger(value) ? Math.round(value) : value,
      ]),
    ),
  ),
);
