/**
 * In-process benchmark harness. `bench/run.mjs` bundles this file with esbuild at run time into a temporary .mjs
 * (dist/cli.js is the CLI and runs main() on import, so the index is imported from source here) and runs it in child
 * processes, one per measurement, so each peak RSS is its own:
 *
 *   node --expose-gc harness.mjs generate <root> <skills>  writes a bench tree (bench-tree.ts); prints its stats
 *   node --expose-gc harness.mjs floor <root> [runs]       sync walk + readFileSync + sha256, no parsing
 *   node --expose-gc harness.mjs stat-floor <root> [runs]  sync walk + lstat of every file (what a warm start needs)
 *   node --expose-gc harness.mjs hash-list <list> [runs]   readFileSync + sha256 of the files named in <list>
 *   node --expose-gc harness.mjs build <root> [runs]       src/index/build.ts buildSnapshot, with an event-loop probe
 *   node harness.mjs pipe-floor                            the stdio floor for resources/read (see pipeFloor)
 *
 * Every mode but pipe-floor prints one JSON line on stdout. Each run is preceded by a GC and a reset of the peak RSS
 * (`/proc/self/clear_refs` = 5), so `hwmKb` is the peak of that run alone.
 */
import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
// The code under test is imported on demand (split into chunks by the bundler), so that each mode's process loads
// only what it measures and its peak RSS holds nothing else.

/** Interval of the event-loop probe (ms). */
const PROBE_MS = 5;

interface Run {
  ms: number;
  /** Peak RSS of this run (kB), or the process peak when it cannot be reset. */
  hwmKb: number;
  files?: number;
  bytes?: number;
  skills?: number;
  diagnostics?: number;
  /** Longest lateness of a setInterval(PROBE_MS) tick during the run (ms): the longest the loop was blocked. */
  probeMaxMs?: number;
  /** monitorEventLoopDelay max (ms), a cross-check of probeMaxMs. */
  eldMaxMs?: number;
  eldP99Ms?: number;
}

function procStatus(field: string): number {
  const match = new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(readFileSync('/proc/self/status', 'utf8'));
  return match === null ? Number.NaN : Number(match[1]);
}

let hwmResettable = true;
function resetPeak(): void {
  (globalThis as { gc?: () => void }).gc?.();
  try {
    writeFileSync('/proc/self/clear_refs', '5');
  } catch {
    hwmResettable = false;
  }
}

/** The floor: the simplest fast single-thread way to read and hash every file. */
function floorOnce(root: string): { files: number; bytes: number } {
  let files = 0;
  let bytes = 0;
  const visit = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) visit(full);
      else if (entry.isFile()) {
        const data = readFileSync(full);
        createHash('sha256').update(data).digest('hex');
        files++;
        bytes += data.length;
      }
    }
  };
  visit(root);
  return { files, bytes };
}

/** The stat floor: the simplest single-thread walk that looks at every file without reading it. */
function statFloorOnce(root: string): { files: number } {
  let files = 0;
  const visit = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) visit(full);
      else if (entry.isFile()) {
        lstatSync(full);
        files++;
      }
    }
  };
  visit(root);
  return { files };
}

/** Reads and hashes the files named one per line in `list`. */
function hashListOnce(list: string): { files: number; bytes: number } {
  let bytes = 0;
  const files = readFileSync(list, 'utf8')
    .split('\n')
    .filter((line) => line !== '');
  for (const file of files) {
    const data = readFileSync(file);
    createHash('sha256').update(data).digest('hex');
    bytes += data.length;
  }
  return { files: files.length, bytes };
}

async function timeRuns(runs: number, once: () => Promise<Omit<Run, 'ms' | 'hwmKb'>>, probe = false): Promise<Run[]> {
  const results: Run[] = [];
  for (let run = 0; run < runs; run++) {
    resetPeak();
    let probeMaxMs = 0;
    let last = performance.now();
    const timer = probe
      ? setInterval(() => {
          const now = performance.now();
          probeMaxMs = Math.max(probeMaxMs, now - last - PROBE_MS);
          last = now;
        }, PROBE_MS)
      : undefined;
    const eld = probe ? monitorEventLoopDelay({ resolution: PROBE_MS }) : undefined;
    eld?.enable();
    const started = performance.now();
    last = started;
    const extra = await once();
    const ms = performance.now() - started;
    if (timer !== undefined) {
      // The gap between the last tick and the end of the build counts too.
      probeMaxMs = Math.max(probeMaxMs, performance.now() - last - PROBE_MS);
      clearInterval(timer);
    }
    eld?.disable();
    results.push({
      ms,
      hwmKb: procStatus('VmHWM'),
      ...extra,
      ...(probe ? { probeMaxMs, eldMaxMs: (eld?.max ?? 0) / 1e6, eldP99Ms: (eld?.percentile(99) ?? 0) / 1e6 } : {}),
    });
  }
  return results;
}

/**
 * The stdio floor for `resources/read`: answers each request line `{"id","params":{"path","uri","mimeType"}}` with the
 * JSON-RPC result the server would send (the file as a base64 blob), using only readFileSync and stdout. What any
 * server in Node must at least spend to carry the same bytes over the same pipe.
 */
async function pipeFloor(): Promise<void> {
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    if (line === '') continue;
    const { id, params } = JSON.parse(line) as { id: number; params: { path: string; uri: string; mimeType: string } };
    const blob = readFileSync(params.path).toString('base64');
    // base64 needs no JSON escaping: the line is concatenated around it instead of JSON.stringify-ing 4/3 of the file.
    const head = JSON.stringify({
      jsonrpc: '2.0',
      id,
      result: { contents: [{ uri: params.uri, mimeType: params.mimeType, blob: '' }] },
    });
    const reply = `${head.slice(0, -5)}${blob}"}]}}\n`;
    if (!process.stdout.write(reply)) await new Promise((resolve) => process.stdout.once('drain', resolve));
  }
}

async function main(): Promise<void> {
  const [mode, root, third] = process.argv.slice(2);
  if (mode === 'pipe-floor') return pipeFloor();
  if (root === undefined)
    throw new Error('usage: harness.mjs <generate|floor|stat-floor|hash-list|build|pipe-floor> <root> [runs|skills]');
  const baseRssKb = procStatus('VmRSS');
  const runs = Number(third ?? 2);
  let results: Run[];
  switch (mode) {
    case 'generate': {
      const { writeBenchTree } = await import('./bench-tree.js');
      process.stdout.write(`${JSON.stringify(writeBenchTree(root, Number(third)))}\n`);
      return;
    }
    case 'floor':
      results = await timeRuns(runs, async () => floorOnce(root));
      break;
    case 'stat-floor':
      results = await timeRuns(runs, async () => statFloorOnce(root));
      break;
    case 'hash-list':
      results = await timeRuns(runs, async () => hashListOnce(root));
      break;
    case 'build': {
      // The server's heap settings (src/heap.ts, imported first by the CLI), then the index.
      await import('../src/cli/heap.js');
      const { buildSnapshot } = await import('../src/index/build.js');
      results = await timeRuns(
        runs,
        async () => {
          const snapshot = await buildSnapshot([{ dir: root, prefix: [] }]);
          let bytes = 0;
          for (const skill of snapshot.ordered) bytes += skill.totalBytes;
          return {
            skills: snapshot.ordered.length,
            files: snapshot.fileCount,
            bytes,
            diagnostics: snapshot.diagnostics.length,
          };
        },
        true,
      );
      break;
    }
    default:
      throw new Error(`unknown mode ${mode}`);
  }
  process.stdout.write(`${JSON.stringify({ mode, baseRssKb, hwmResettable, runs: results })}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
