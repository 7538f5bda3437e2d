// Renders the results of bench/run.mjs as a markdown table (printed) and BENCHMARKS.md (table + machine, method,
// commands and targets). Pure formatting: every figure comes from the run.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** A numeric constant exported by a source file, read from the source so the report tracks it. */
function sourceConstant(file, name) {
  try {
    const text = readFileSync(fileURLToPath(new URL(`../src/${file}`, import.meta.url)), 'utf8');
    return Number(new RegExp(`export const ${name} = ([\\d_]+)`, 'u').exec(text)?.[1]?.replaceAll('_', '') ?? Number.NaN);
  } catch {
    return Number.NaN;
  }
}
/** The watcher's debounce (ms). */
const DEBOUNCE_MS = sourceConstant('watch/watcher.ts', 'DEBOUNCE_MS');
/** How long `initialize` waits for the first index build under `--compat auto` (ms). */
const COMPAT_CATALOG_WAIT_MS = sourceConstant('server/compat.ts', 'COMPAT_CATALOG_WAIT_MS');

const TARGETS = {
  startupRatio: 1.3,
  sdkSpeedup: 10,
  eventLoopMs: 50,
  afterDebounceMs: 100,
  rssMb: 150,
};

const median = (values) => {
  const sorted = values.filter((value) => Number.isFinite(value)).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
const ms = (value) => (!Number.isFinite(value) ? 'n/a' : value >= 1000 ? `${(value / 1000).toFixed(2)} s` : value >= 100 ? `${value.toFixed(0)} ms` : `${value.toFixed(1)} ms`);
const mb = (kb) => (Number.isFinite(kb) ? `${(kb / 1024).toFixed(0)} MB` : 'n/a');
const ratio = (value) => (Number.isFinite(value) ? `${value.toFixed(2)}x` : 'n/a');
const count = (value) => value.toLocaleString('en-US');
const bytes = (value) => (value >= 2 ** 30 ? `${(value / 2 ** 30).toFixed(2)} GiB` : `${(value / 2 ** 20).toFixed(0)} MiB`);
const warm = (measure) => measure.runs.at(-1);
const first = (measure) => measure.runs[0];
const throughput = (read) => read.bytes / 1e6 / (read.ms / 1000);

/** Derived figures of one tree size. */
function figures(row, smallest) {
  const floor = warm(row.floor).ms;
  const build = warm(row.build).ms;
  const sdk = warm(row.sdk).ms;
  const bare = median(row.stdio.bare);
  const list = median(row.stdio.list);
  const enumeration = median(row.stdio.enumerations);
  const ping = median(row.stdio.pingRuns);
  const floorPeakKb = Math.max(...row.floor.runs.map((run) => run.hwmKb));
  const live = row.live === undefined ? undefined : {
    median: median(row.live.latencies),
    min: Math.min(...row.live.latencies),
    max: Math.max(...row.live.latencies),
    rebuild: median(row.live.rebuildMs),
    rebuildMax: Math.max(...row.live.rebuildMs),
  };
  const smallestLive = smallest?.live === undefined ? undefined : median(smallest.live.latencies);
  return {
    floor, build, sdk, bare, list, enumeration, ping, floorPeakKb, live, smallestLive,
    init: median(row.stdio.init),
    initCompatOff: median(row.stdio.initCompatOff),
    buildRatio: build / floor,
    sdkRatio: sdk / build,
    startupRatio: list / (floor + bare),
    eventLoopMax: Math.max(...row.build.runs.map((run) => run.probeMaxMs)),
    serverPeakKb: Math.max(...row.stdio.hwmKb),
    buildPeakKb: Math.max(...row.build.runs.map((run) => run.hwmKb)),
    readMBps: throughput(row.stdio.reads),
    pipeMBps: throughput(row.stdio.pipeFloor),
  };
}

function targetLines(results, quick) {
  const all = results.map((row) => ({ row, f: figures(row, results[0]) }));
  const largest = all.at(-1);
  const atLeast1000 = all.filter(({ row }) => row.skills >= 1000);
  const verdict = (ok) => (ok ? '**met**' : '**not met**');
  const lines = [];
  const startupOk = atLeast1000.every(({ f }) => f.startupRatio <= TARGETS.startupRatio);
  lines.push(`- Spawn → first complete \`skills/list\` within ${TARGETS.startupRatio}x of (floor + bare Node start) at 1,000+ skills: ${verdict(startupOk)} (${atLeast1000.map(({ row, f }) => `${count(row.skills)}: ${ratio(f.startupRatio)}`).join('; ')}).`);
  const sdkOk = all.every(({ f }) => f.sdkRatio >= TARGETS.sdkSpeedup);
  lines.push(`- At least ${TARGETS.sdkSpeedup}x faster than the SDK's \`loadSkills()\` (warm, in-process): ${verdict(sdkOk)} (${all.map(({ row, f }) => `${count(row.skills)}: ${ratio(f.sdkRatio)}`).join('; ')}; for scale, the single-thread floor itself is ${all.map(({ f }) => ratio(f.sdk / f.floor)).join(' / ')} faster than \`loadSkills()\`).`);
  const loopOk = all.every(({ f }) => f.eventLoopMax < TARGETS.eventLoopMs);
  lines.push(`- Event loop never blocked > ${TARGETS.eventLoopMs} ms while indexing (worst of both runs): ${verdict(loopOk)} (${all.map(({ row, f }) => `${count(row.skills)}: ${ms(f.eventLoopMax)}`).join('; ')}).`);
  const liveRow = all.filter(({ f }) => f.live !== undefined).at(-1);
  if (liveRow !== undefined) {
    const after = liveRow.f.live.median - DEBOUNCE_MS;
    const note = liveRow.row.skills < 10_000 ? ` (measured at ${count(liveRow.row.skills)} skills only: --quick)` : '';
    lines.push(`- A single-file change at 10,000 skills applied within ${TARGETS.afterDebounceMs} ms after the ${DEBOUNCE_MS} ms debounce (median write → notification − debounce)${note}: ${verdict(after <= TARGETS.afterDebounceMs && !quick)} (${ms(after)} after the debounce; max ${ms(liveRow.f.live.max - DEBOUNCE_MS)}; server-side rebuild median ${ms(liveRow.f.live.rebuild)}).`);
  }
  const rssNote = largest.row.skills < 10_000 ? ` (measured at ${count(largest.row.skills)} skills only: --quick)` : '';
  const rssOk = !quick && largest.f.serverPeakKb / 1024 < TARGETS.rssMb;
  lines.push(`- Peak RSS under ${TARGETS.rssMb} MB at 10,000 skills / 100,000 files (stdio server, VmHWM after the first complete list)${rssNote}: ${verdict(rssOk)} (server ${mb(largest.f.serverPeakKb)}; in-process build ${mb(largest.f.buildPeakKb)}).`);
  return lines;
}

/**
 * @returns {{ table: string, markdown: string }} the table alone (for the terminal) and the whole BENCHMARKS.md.
 */
export function renderReport({ quick, results, machine, loadAfter, git, date, wallSeconds, runs, loadFigures = LOAD_FIGURES_PLACEHOLDER }) {
  const all = results.map((row) => ({ row, f: figures(row, results[0]) }));
  const header = `| measure | baseline / ratio | ${all.map(({ row }) => `${count(row.skills)} skills`).join(' | ')} |`;
  const rule = `|---|---|${all.map(() => '---:').join('|')}|`;
  const line = (measure, baseline, cell) => `| ${measure} | ${baseline} | ${all.map((item) => cell(item)).join(' | ')} |`;
  const warmFirst = (measure) => (item) => `${ms(warm(measure(item)).ms)} (first ${ms(first(measure(item)).ms)})`;
  const rows = [
    line('tree', '', ({ row }) => `${count(row.tree.files)} files, ${bytes(row.tree.bytes)}, ${row.tree.large.length} large`),
    line('**floor**: sync walk + readFileSync + sha256, no parsing (warm; first)', '(baseline)', warmFirst(({ row }) => row.floor)),
    line('cold index build, in-process `buildSnapshot` (warm; first)', 'ours / floor', (item) => `${warmFirst(({ row }) => row.build)(item)} · **${ratio(item.f.buildRatio)}**`),
    line("SDK `loadSkills()` on the same tree (warm; first)", 'loadSkills / ours (loadSkills / floor)', (item) => `${warmFirst(({ row }) => row.sdk)(item)} · **${ratio(item.f.sdkRatio)}** (${ratio(item.f.sdk / item.f.floor)})`),
    line(`bare \`node -e ''\` spawn → exit, median of ${runs.startup}`, '(baseline)', ({ f }) => ms(f.bare)),
    line(`spawn → \`initialize\` answer, median of ${runs.startup}`, '/ bare node', ({ f }) => `${ms(f.init)} · ${ratio(f.init / f.bare)}`),
    line(`spawn → \`initialize\` answer with \`--compat off\` (no wait for the catalog), median of ${runs.startup}`, '/ bare node', ({ f }) => `${ms(f.initCompatOff)} · ${ratio(f.initCompatOff / f.bare)}`),
    line(`spawn → first complete \`skills/list\` (all pages), median of ${runs.startup}`, `/ (floor + bare node); target ≤ ${TARGETS.startupRatio}x`, ({ f }) => `${ms(f.list)} · **${ratio(f.startupRatio)}**`),
    line('… the same with watching on (the default; one run, the live-update server): spawn → first complete `skills/list` (watcher ready; index built)', '/ (floor + bare node)', ({ row, f }) => (row.live === undefined ? '—' : `${ms(row.live.startup.listMs)} (${ms(row.live.startup.watcherReadyMs)}; ${ms(row.live.startup.indexBuiltMs)}) · ${ratio(row.live.startup.listMs / (f.floor + f.bare))}`)),
    line(`full \`skills/list\` enumeration, index built, page size 100, median of ${runs.enumerations}`, '/ same number of `ping` round trips', ({ row, f }) => `${ms(f.enumeration)} (${row.stdio.pages} pages) · ${ratio(f.enumeration / f.ping)}`),
    line('`resources/read` of every large file once (base64 blobs)', '/ pipe floor (same bytes, base64 JSON-RPC, readFileSync)', ({ row, f }) => `${f.readMBps.toFixed(0)} MB/s (${row.stdio.reads.files} files, ${ms(row.stdio.reads.ms)}) · ${ratio(f.readMBps / f.pipeMBps)} of ${f.pipeMBps.toFixed(0)} MB/s`),
    line(`write → \`notifications/resources/updated\`, median of ${runs.edits} edits (min–max)`, `/ ${count(results[0].skills)}-skill median; debounce ${DEBOUNCE_MS} ms`, ({ f }) => (f.live === undefined ? '—' : `${ms(f.live.median)} (${ms(f.live.min)}–${ms(f.live.max)}) · ${ratio(f.live.median / f.smallestLive)}`)),
    line('… of which server-side rebuild (`index updated` log), median (max)', `/ ${TARGETS.afterDebounceMs} ms after-debounce budget`, ({ f }) => (f.live === undefined ? '—' : `${ms(f.live.rebuild)} (${ms(f.live.rebuildMax)}) · ${ratio(f.live.rebuild / TARGETS.afterDebounceMs)}`)),
    line('event loop: longest block during `buildSnapshot` (setInterval 5 ms probe; warm; first)', `/ ${TARGETS.eventLoopMs} ms target`, ({ row }) => `${ms(warm(row.build).probeMaxMs)} (first ${ms(first(row.build).probeMaxMs)}) · **${ratio(Math.max(...row.build.runs.map((run) => run.probeMaxMs)) / TARGETS.eventLoopMs)}**`),
    line('peak RSS (VmHWM): floor process', '(baseline)', ({ f }) => mb(f.floorPeakKb)),
    line(`peak RSS: stdio server after first complete \`skills/list\` (max of ${runs.startup})`, `/ floor; target < ${TARGETS.rssMb} MB at 10,000`, ({ f }) => `**${mb(f.serverPeakKb)}** · ${ratio(f.serverPeakKb / f.floorPeakKb)}`),
    line('peak RSS: stdio server after the large reads', '/ floor', ({ row, f }) => `${mb(row.stdio.hwmAfterReadsKb)} · ${ratio(row.stdio.hwmAfterReadsKb / f.floorPeakKb)}`),
    line('peak RSS: watching server (chokidar on) after its first complete `skills/list`', '/ floor', ({ row, f }) => (row.live === undefined ? '—' : `${mb(row.live.startup.hwmAfterListKb)} · ${ratio(row.live.startup.hwmAfterListKb / f.floorPeakKb)}`)),
    line(`peak RSS: watching server (chokidar on) after the ${runs.edits} edits`, '/ floor', ({ row, f }) => (row.live === undefined ? '—' : `${mb(row.live.hwmKb)} · ${ratio(row.live.hwmKb / f.floorPeakKb)}`)),
    line('peak RSS: in-process `buildSnapshot` (per run, worst)', '/ floor', ({ f }) => `${mb(f.buildPeakKb)} · ${ratio(f.buildPeakKb / f.floorPeakKb)}`),
    line('peak RSS: in-process `loadSkills()` (per run, worst)', '/ floor', ({ row, f }) => `${mb(Math.max(...row.sdk.runs.map((run) => run.hwmKb)))} · ${ratio(Math.max(...row.sdk.runs.map((run) => run.hwmKb)) / f.floorPeakKb)}`),
  ];
  const table = [header, rule, ...rows].join('\n');

  const checks = [];
  for (const { row } of all) {
    const expected = row.skills;
    const got = { build: warm(row.build).skills, loadSkills: warm(row.sdk).skills, 'skills/list': row.stdio.skills };
    for (const [what, value] of Object.entries(got)) if (value !== expected) checks.push(`${count(row.skills)} skills: ${what} published ${value}`);
    if (warm(row.floor).files !== row.tree.files) checks.push(`${count(row.skills)} skills: the floor read ${warm(row.floor).files} files of ${row.tree.files}`);
    if (warm(row.build).files !== row.tree.files) checks.push(`${count(row.skills)} skills: buildSnapshot indexed ${warm(row.build).files} files of ${row.tree.files}`);
    if (warm(row.sdk).warnings > 0) checks.push(`${count(row.skills)} skills: loadSkills reported ${warm(row.sdk).warnings} warnings`);
  }

  const load = (m) => `load average ${m.loadavg.map((n) => n.toFixed(2)).join(', ')} (\`uptime\`: \`${m.uptime}\`)`;
  const markdown = `# Benchmarks

Generated by \`npm run bench\`${quick ? ' -- --quick' : ''} (bench/run.mjs) on ${date}; the whole run took ${wallSeconds.toFixed(0)} s.
Do not edit by hand: re-run the benchmark.

## Machine

- CPU: ${machine.cpu}, ${machine.cores} cores; memory ${machine.memGiB.toFixed(1)} GiB; ${machine.platform}
- Node ${machine.node}
- Load when the run started: ${load(machine)}
- Load when it ended: ${load(loadAfter)}
- Other engineers may be running tests on this machine at the same time: figures taken under load are noisier and
  slower, ratios against baselines measured in the same run less so.
- Code: commit ${git.commit}${git.dirty.length > 0 ? `, with uncommitted changes in ${git.dirty.map((item) => `\`${item.slice(3)}\``).join(', ')}` : ''} (\`dist/cli.js\` built by \`npm run bench\` from the working tree).

## Results

${table}

Ratios in **bold** are the ones the targets below are judged on. "x" ratios divide the figure by its baseline
(for \`loadSkills\`, loadSkills' time by ours: higher is better for us). MB = 10^6 bytes for throughput, 2^20 for RSS.
${checks.length > 0 ? `\nSanity checks that failed (figures above may not compare like with like):\n${checks.map((item) => `- ${item}`).join('\n')}\n` : '\nSanity checks: every measurement published or read every skill and file of its tree.\n'}
## Targets

${targetLines(results, quick).join('\n')}

## How it is measured

- **Trees**: \`bench/bench-tree.ts\` reuses \`writeSyntheticTree\` (\`bench/tree.ts\`): skills in 50 group folders, 10
  files each (SKILL.md, 6 references, 2 scripts, a template or an asset), mostly a few kB; one skill in 10 / 40 / 80
  (100 / 1,000 / 10,000 skills) has a binary asset of 3, 6 or 12 MiB (cycled), so both hashing paths run (≤ 4 MiB
  synchronously, larger in chunks) and reads are base64 blobs. Trees are written under \`os.tmpdir()\`, flushed with
  \`sync\` (not timed) and deleted at the end.
- **Warm vs first**: every in-process measurement (floor, \`buildSnapshot\`, \`loadSkills\`) runs ${runs.inProcess} times in one
  fresh process per measurement; the table reports the **second (warm) run** and shows the first in parentheses.
  The trees were just written, so their pages are in the page cache for both runs (the page cache is not dropped:
  that needs root); the first run also pays JIT warm-up. "Cold index build" means a fresh \`IndexBuilder\` with
  an empty digest cache, as at server start. Before each run the harness collects garbage and resets the peak RSS
  (\`/proc/self/clear_refs\`), so each run's VmHWM is its own.
- **In-process harness**: \`bench/harness.ts\` is bundled with esbuild's JS API at run time into a temporary .mjs
  (it imports \`src/index/build.ts\`; \`dist/cli.js\` runs the CLI on import). The floor is a synchronous recursive
  \`readdirSync(withFileTypes)\` + \`readFileSync\` + \`createHash('sha256')\` walk, no parsing, one thread.
  \`loadSkills()\` is the SDK's (\`@modelcontextprotocol/server/ext/skills/node\`), warnings counted, not printed.
- **Event loop**: during each \`buildSnapshot\` run a \`setInterval(…, 5)\` probe records its longest lateness
  (the longest the loop could not run a timer); \`monitorEventLoopDelay\` is recorded too (raw JSON) as a cross-check.
- **Stdio**: \`node bin/skills-serve.js --no-watch <root>\` (the built CLI) over real pipes with a minimal
  newline-delimited JSON-RPC client (bench/stdio.mjs): spawn → \`initialize\` answer, and spawn → last page of the
  first complete \`skills/list\`, median of ${runs.startup} runs interleaved with bare \`node -e ''\` spawns. Under the
  default \`--compat auto\`, \`initialize\` waits up to ${COMPAT_CATALOG_WAIT_MS} ms (\`COMPAT_CATALOG_WAIT_MS\`) for the first index build,
  to list the skills in its instructions; the \`--compat off\` row is a separate server answering \`initialize\` only. Peak RSS is
  \`/proc/<pid>/status\` VmHWM right after that list. The last of those servers then enumerates \`skills/list\`
  ${runs.enumerations} more times (page size 100), sends as many \`ping\`s as there are pages (the transport's floor), and reads every
  large file once with \`resources/read\` (after one untimed warm-up read; blob decoded, size checked, digest of the
  first checked). The pipe floor is a Node child answering the same requests with
  \`readFileSync(path).toString('base64')\` in the same JSON-RPC shape, the line concatenated around the blob (no
  \`JSON.stringify\` of 16 MB strings), read by the same client.
- **Live updates** (bench/live.mjs, the logic of bench/live-latency.mjs): the CLI with watching on (the default
  mode; its start — spawn → first complete list, and when its log says the watcher is ready and the index built — is
  reported too, one run); per edit,
  \`resources/subscribe\` a reference file, write it, time until \`notifications/resources/updated\` for it arrives;
  ${runs.edits} edits spread over the tree, each after the previous one's follow-up re-check rebuild has finished. The
  server-side rebuild time is the \`ms\` of its \`index updated\` log line.

## Reproduce

\`\`\`sh
npm ci
npm run bench              # full: 100, 1,000 and 10,000 skills; writes BENCHMARKS.md (about 5 minutes here)
npm run bench -- --quick   # 100 and 1,000 skills; prints the table, writes the report to $TMPDIR
# without rebuilding: node bench/run.mjs [--quick] [--out FILE] [--keep]
\`\`\`

${LOAD_SECTION}
${loadFigures}
`;
  return { table, markdown };
}

/** Markers of the figures of \`npm run bench:load\` (bench/load.mjs --write fills them; \`npm run bench\` keeps them). */
export const LOAD_FIGURES_BEGIN = '<!-- bench:load figures -->';
export const LOAD_FIGURES_END = '<!-- /bench:load figures -->';
const LOAD_FIGURES_PLACEHOLDER = `${LOAD_FIGURES_BEGIN}\nNo figures yet: run \`npm run bench:load -- --write\`.\n${LOAD_FIGURES_END}`;

/** The figures block of an existing report (markers included), or the placeholder. */
export function loadFiguresOf(markdown) {
  const from = markdown.indexOf(LOAD_FIGURES_BEGIN);
  const to = markdown.indexOf(LOAD_FIGURES_END);
  return from === -1 || to < from ? LOAD_FIGURES_PLACEHOLDER : markdown.slice(from, to + LOAD_FIGURES_END.length);
}

export const LOAD_SECTION = `## Load and soak (\`npm run bench:load\`)

\`bench/load.mjs\`, separate from \`npm run bench\` (its figures below are kept when that one rewrites this file):
N keep-alive HTTP clients on one \`--http 127.0.0.1:0\` server (the port is read from its stderr log) and M stdio
sessions, one server process each, all serving the same tree, send a mix of \`resources/read\` (55%), \`skills/get\`
(20%), \`resources/directory/read\` (15%) and \`skills/list\` pages (10%) for a bounded time, while a churn process
(\`bench/load-churn.mjs\`) edits files, adds, removes, renames, breaks and fixes skills at a steady rate. Defaults:
16 HTTP clients, 4 stdio sessions with 4 requests in flight each, 40 s, 300 skills, 20 churn operations/s (about a
minute in all); \`--http-clients\`, \`--stdio\`, \`--stdio-concurrency\`, \`--seconds\`, \`--skills\`, \`--churn-rate\`
change them.

- **Every read is judged** (\`bench/load-tracker.mjs\`, unit-tested): per server and URI, the digests its
  \`skills/list\` and \`skills/get\` answers showed, with when each was asked and answered, and, on stdio, the
  \`notifications/resources/updated\` it sent for URIs the session subscribed to. A read is a **mismatch** when its
  bytes hash to a digest that server had replaced before the read was sent (an answer received earlier showed another
  digest, or an update was announced, and the old one was never seen again), or to a digest it never published and
  the churn never wrote there. A read of a version published and replaced between two observations is reported as
  "unobserved" (consistent, not an error); a read that shows a version not yet observed is followed at once by a
  \`skills/get\` of its skill. The churn never repeats content, so a replaced digest cannot legitimately return.
- **Errors**: anything but a result, except -32602 for a URI whose skill the churn removed, renamed or broke, or that
  the answering server had not yet published when the request was sent (servers follow the tree each at its pace).
- **Throughput** is requests answered per second of load per transport; **p50 / p99** are per request, client side.
- **Resources**: VmRSS and the number of entries in \`/proc/<pid>/fd\` of every server, sampled every 500 ms during
  the load. **Leak check**: the first third of the samples is warm-up; the mean of the last third may exceed the
  mean of the second third by at most max(10%, 8 MB) of RSS and max(10%, 2) descriptors.
- **Nothing lost**: once the churn stops, every server's complete \`skills/list\` must equal the churn's final tree
  (every skill, every file's digest and size) within 30 s.
- The command exits 1 on any error, mismatch, failed leak check, catalog that did not converge, non-JSON-RPC stdout
  line or server exit other than 0; the raw figures go to \`$TMPDIR/skills-serve-bench-load.json\`.

\`\`\`sh
npm run bench:load                     # build, then the default run; prints the table
npm run bench:load -- --write          # … and replaces the figures below
node bench/load.mjs --seconds 300 --http-clients 32   # a longer soak, without rebuilding
\`\`\`
`;
