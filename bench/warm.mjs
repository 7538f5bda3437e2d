#!/usr/bin/env node
// The warm start alone, A/B: spawn → first complete `skills/list` with nothing changed since the last start, against
// the stat floor + bare node measured in the same rounds (the ratio `npm run bench` judges), for one or more builds.
// A focused companion of bench/run.mjs for work on the warm path: minutes instead of the whole run.
//
//   node bench/warm.mjs [--skills 1000,10000] [--rounds 5] [--tree-dir DIR] [--flags "--no-watch"] APP...
//
// Each APP is a directory holding bin/skills-serve.js and dist/ (a copy, so a rebuild during the run changes
// nothing); with none, the worktree's own build. Trees are generated under --tree-dir (kept and reused when given,
// else a temporary directory removed at the end). Per tree and round: bare node, stat floor, then each app's warm
// start (its own cache directory, written once by a cold start first), so every app is measured under the same load.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { bundleHarness } from './harness-bundle.mjs';
import { measureStart } from './start.mjs';
import { bareNodeStart, killAll, spawnNode } from './stdio.mjs';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const argv = process.argv.slice(2);
const option = (name, fallback) => {
  const at = argv.indexOf(name);
  if (at === -1) return fallback;
  const [value] = argv.splice(at, 2).slice(1);
  return value;
};
const SIZES = option('--skills', '1000').split(',').map(Number);
const ROUNDS = Number(option('--rounds', '5'));
const TREE_DIR = option('--tree-dir', undefined);
const FLAGS = option('--flags', '').split(' ').filter(Boolean);
const APPS = (argv.length > 0 ? argv : [REPO]).map((app) => path.resolve(app));

const work = mkdtempSync(path.join(os.tmpdir(), 'skills-serve-warm-'));
const cleanup = () => {
  killAll();
  rmSync(work, { recursive: true, force: true });
};
process.once('exit', cleanup);
const log = (text) => process.stderr.write(`warm: ${text}\n`);
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** CPU time (user + system, ms) a live process has used: on a loaded machine, steadier than its wall time. */
function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime, stime in clock ticks (USER_HZ 100)
}

/** One warm start: its figures, and the CPU time the server used until the list was complete. */
async function warmStart(bin, root) {
  const { server, listed: _listed, ...result } = await measureStart(bin, root, FLAGS, { keep: true });
  const cpu = cpuMs(server.pid);
  await server.close();
  return { ...result, cpuMs: cpu };
}

async function runHarness(harness, args) {
  const child = spawnNode([harness, ...args.map(String)]);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const code = await new Promise((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`harness ${args.join(' ')} failed:\n${stderr}`);
  return JSON.parse(stdout.trim().split('\n').at(-1));
}

async function main() {
  const harness = await bundleHarness(work);
  for (const skills of SIZES) {
    const root = path.join(TREE_DIR ?? work, `tree-${skills}`);
    mkdirSync(root, { recursive: true });
    if (readdirSync(root).length === 0) {
      log(`${skills} skills: generating the tree`);
      await runHarness(harness, ['generate', root, skills]);
      // Files changed within 2 s of being hashed are not cached (the racy window, src/index/record.ts): wait it out.
      await new Promise((resolve) => setTimeout(resolve, 2500));
    }
    const caches = APPS.map((_, index) => path.join(work, `cache-${skills}-${index}`));
    for (const [index, app] of APPS.entries()) {
      process.env.SKILLS_SERVE_CACHE_DIR = caches[index];
      await measureStart(path.join(app, 'bin', 'skills-serve.js'), root, ['--no-watch']); // writes the cache
    }
    const bare = [];
    const stat = [];
    const warm = APPS.map(() => []);
    for (let round = 0; round < ROUNDS; round++) {
      log(`${skills} skills: round ${round + 1}/${ROUNDS}`);
      bare.push(await bareNodeStart());
      stat.push((await runHarness(harness, ['stat-floor', root, 1])).runs[0].ms);
      for (const [index, app] of APPS.entries()) {
        process.env.SKILLS_SERVE_CACHE_DIR = caches[index];
        warm[index].push(await warmStart(path.join(app, 'bin', 'skills-serve.js'), root));
      }
    }
    const floor = median(stat) + median(bare);
    const ms = (value) => `${value.toFixed(0)} ms`;
    process.stdout.write(
      `${skills} skills, ${ROUNDS} rounds${FLAGS.length > 0 ? `, ${FLAGS.join(' ')}` : ''}: stat floor ${ms(median(stat))} (${stat.map(ms).join(', ')}), bare node ${ms(median(bare))}\n`,
    );
    for (const [index, app] of APPS.entries()) {
      const runs = warm[index];
      const list = median(runs.map((run) => run.listMs));
      process.stdout.write(
        `  ${app}: warm ${ms(list)} = ${(list / floor).toFixed(2)}x (${runs.map((run) => ms(run.listMs)).join(', ')}); ` +
          `CPU ${ms(median(runs.map((run) => run.cpuMs)))} (${runs.map((run) => ms(run.cpuMs)).join(', ')}); initialize ${ms(median(runs.map((run) => run.initMs)))}, index-built ${ms(median(runs.map((run) => run.indexBuiltMs)))}, ` +
          `trusted ${runs.at(-1).digestsTrusted}/${runs.at(-1).digestsStored}, peak RSS ${(median(runs.map((run) => run.hwmKb)) / 1024).toFixed(0)} MiB, ` +
          `skills ${runs[0].skills}, files ${runs[0].files}\n`,
      );
    }
  }
}

main().catch((error) => {
  process.stderr.write(`warm: failed: ${error.stack ?? error}\n`);
  process.exitCode = 1;
});
