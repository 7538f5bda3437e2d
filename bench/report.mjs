// Renders the results of bench/run.mjs: the project's targets with their figures (printed and in BENCHMARKS.md), the
// full table, the machine, the method and the commands. Pure formatting: every figure comes from the run.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** A numeric constant exported by a source file, read from the source so the report tracks it. */
function sourceConstant(file, name) {
  try {
    const text = readFileSync(fileURLToPath(new URL(`../src/${file}`, import.meta.url)), 'utf8');
    // A literal or a product of literals (`1024 * 1024`).
    const value = new RegExp(`export const ${name} = ([\\d_ *]+);`, 'u').exec(text)?.[1];
    return value === undefined
      ? Number.NaN
      : value.split('*').reduce((product, factor) => product * Number(factor.trim().replaceAll('_', '')), 1);
  } catch {
    return Number.NaN;
  }
}
/** The watcher's debounce (ms). */
const DEBOUNCE_MS = sourceConstant('watch/batch.ts', 'DEBOUNCE_MS');
/** Files over this size are hashed off the walk, asynchronously (bytes). */
const SYNC_HASH_MAX_BYTES = sourceConstant('index/digest.ts', 'SYNC_HASH_MAX_BYTES');

/** The targets (BENCHMARKS.md lists them with their figures): startup and memory, reads, HTTP, live edits. */
export const TARGETS = {
  /** Warm start / (stat floor + bare node), and its stretch. */
  warmRatio: 1.5,
  warmStretch: 1.3,
  /** Spawn → `initialize` on sample-skills / bare node, on Node 20 and on Node 22. */
  initRatio: 1.5,
  /** Warm start after editing 1% of the files ≤ warm start + this × the hashing floor of the edited bytes. */
  editedFactor: 1.3,
  /** Cold start / (hashing floor + bare node), and its stretch. */
  coldRatio: 1.5,
  coldStretch: 1.3,
  rssWatchMb: 200,
  /** Digest cache bytes per file, its name and directory record included in this report's figure. */
  cacheBytesPerFile: 64,
  rssNoWatchMb: 150,
  liveMs: 100,
  eventLoopMs: 50,
  /** HTTP req/s at 32 keep-alive clients: 3× the peak of a 5,000-developer company (about 100 req/s). */
  httpRps: 300,
  readRatio: 0.9,
};

const finite = (values) => values.filter((value) => Number.isFinite(value));
const median = (values) => {
  const sorted = finite(values).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
const quantile = (values, q) => {
  const sorted = finite(values).sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
};
const max = (values) => (finite(values).length === 0 ? Number.NaN : Math.max(...finite(values)));
const min = (values) => (finite(values).length === 0 ? Number.NaN : Math.min(...finite(values)));
const ms = (value) =>
  !Number.isFinite(value)
    ? 'n/a'
    : value >= 1000
      ? `${(value / 1000).toFixed(2)} s`
      : value >= 100
        ? `${value.toFixed(0)} ms`
        : `${value.toFixed(1)} ms`;
/** RSS in MB (10^6 bytes) from kB (1024 bytes, as /proc reports). */
const mb = (kb) => (Number.isFinite(kb) ? `${((kb * 1024) / 1e6).toFixed(0)} MB` : 'n/a');
const mbOf = (kb) => (kb * 1024) / 1e6;
const ratio = (value) => (Number.isFinite(value) ? `${value.toFixed(2)}x` : 'n/a');
const count = (value) => (Number.isFinite(value) ? value.toLocaleString('en-US') : 'n/a');
const size = (value) => (value >= 1e9 ? `${(value / 1e9).toFixed(2)} GB` : `${(value / 1e6).toFixed(1)} MB`);
const throughput = (read) => read.bytes / 1e6 / (read.ms / 1000);
const list = (values, format) => values.map(format).join(', ');

/** Derived figures of one tree size. */
function figures(row) {
  const { starts } = row;
  const bare = median(starts.bare);
  const floor = median(starts.floor.map((run) => run.ms));
  const base = floor + bare;
  const watch = median(starts.watch.map((run) => run.listMs));
  const noWatch = median(starts.noWatch.map((run) => run.listMs));
  const statFloor = median(starts.statFloor.map((run) => run.ms));
  const warm = median(starts.warm.map((run) => run.listMs));
  const warmEdited = median(starts.warmEdited.map((run) => run.listMs));
  const editedFloor = median(starts.editedFloor.map((run) => run.ms));
  const warmAdded = median(starts.warmAdded.map((run) => run.listMs));
  const probeMax = row.probes.map((probe) => max(probe.probe.rtts));
  const probeP99 = row.probes.map((probe) => quantile(probe.probe.rtts, 0.99));
  const live =
    row.live === undefined
      ? undefined
      : {
          median: median(row.live.latencies),
          min: min(row.live.latencies),
          max: max(row.live.latencies),
          rebuild: median(row.live.rebuildMs),
          rebuildMax: max(row.live.rebuildMs),
          extra: row.live.extraRebuilds,
          edits: row.live.latencies.length,
        };
  const http =
    row.http === undefined
      ? undefined
      : {
          ...row.http,
          pooled: row.http.server.rps / row.http.floor.rps,
          roundRatios: row.http.server.perRound.map((rps, round) => rps / row.http.floor.perRound[round]),
        };
  if (http !== undefined) http.ratio = median(http.roundRatios);
  return {
    bare,
    floor,
    base,
    watch,
    noWatch,
    live,
    http,
    probeMax,
    probeP99,
    watchRatio: watch / base,
    noWatchRatio: noWatch / base,
    statFloor,
    statBase: statFloor + bare,
    warm,
    warmRatio: warm / (statFloor + bare),
    warmEdited,
    editedFloor,
    editedBytes: median(starts.editedFloor.map((run) => run.bytes)),
    editedFiles: median(starts.editedFloor.map((run) => run.files)),
    editedBound: warm + TARGETS.editedFactor * editedFloor,
    warmAdded,
    warmPeakKb: max([...starts.warm, ...starts.warmEdited, ...starts.warmAdded].map((run) => run.hwmKb)),
    warmMedianKb: median(starts.warm.map((run) => run.hwmKb)),
    warmTrusted: median(starts.warm.map((run) => run.digestsTrusted)),
    warmStored: median(starts.warm.map((run) => run.digestsStored)),
    cacheBytes: median(starts.cacheBytes),
    cacheBytesPerFile: median(starts.cacheBytes) / row.tree.files,
    cacheBytesPerFileWithoutPaths: (median(starts.cacheBytes) - starts.cachePathBytes) / row.tree.files,
    builtWarm: median(starts.warm.map((run) => run.indexBuiltMs)),
    init: median(starts.watch.map((run) => run.initMs)),
    serving: median(starts.watch.map((run) => run.servingAt)),
    builtWatch: median(starts.watch.map((run) => run.indexBuiltMs)),
    builtNoWatch: median(starts.noWatch.map((run) => run.indexBuiltMs)),
    watchPeakKb: max(starts.watch.map((run) => run.hwmKb)),
    watchMedianKb: median(starts.watch.map((run) => run.hwmKb)),
    noWatchPeakKb: max(starts.noWatch.map((run) => run.hwmKb)),
    noWatchMedianKb: median(starts.noWatch.map((run) => run.hwmKb)),
    floorPeakKb: max(starts.floor.map((run) => run.hwmKb)),
    probeJudged: median(probeMax),
    inProcess: row.build.runs[0],
    enumeration: median(row.built.enumerations),
    ping: median(row.built.pingRuns),
    readMBps: throughput(row.built.reads),
    pipeMBps: throughput(row.built.pipeFloor),
    readRatio: throughput(row.built.reads) / throughput(row.built.pipeFloor),
    watchedDirs: median(starts.watch.map((run) => run.watchedDirs)),
  };
}

/** One target line per target, each with its figure, ratio and verdict. */
const row = (item) => item.row;

function targetLines(all, runs, startup) {
  const at = (skills) => all.find(({ row }) => row.skills === skills);
  const verdict = (ok) => (ok ? '**met**' : '**not met**');
  const quickNote = (skills) => `not measured (\`--quick\`: ${count(skills)} skills only)`;
  const lines = [];
  if (startup !== undefined) {
    const perNode = startup.rows.map(({ node, firstMs, bare, init }) => {
      if (init.length === 0) return `Node ${node}: not measured`;
      const r = median(init) / median(bare);
      return `Node ${node}: ${verdict(r <= TARGETS.initRatio)} — ${ms(median(init))} against ${ms(median(bare))}: **${ratio(r)}** (median of ${init.length}; the first start of the command line, which records the answer: ${ms(firstMs)}, ${ratio(firstMs / median(bare))})`;
    });
    lines.push(
      `- Spawn → \`initialize\` answer on \`sample-skills/\` (6 skills) ≤ ${TARGETS.initRatio}x of a bare \`node -e 0\` of the same Node: ${perNode.join('; ')}.`,
    );
    lines.push(
      `- What each mode loads before its work (\`dist/modes.json\`): ${Object.entries(startup.modes)
        .map(([mode, bytes]) => `${mode} ${size(bytes)}`)
        .join(', ')}.`,
    );
  }
  for (const skills of [1000, 10_000]) {
    const item = at(skills);
    if (item === undefined) {
      lines.push(`- Warm and cold starts at ${count(skills)} skills: ${quickNote(1000)}.`);
      continue;
    }
    const { f } = item;
    const warmStretch = `stretch ${TARGETS.warmStretch}x ${f.warmRatio <= TARGETS.warmStretch ? 'met too' : 'not met'}`;
    lines.push(
      `- Warm start (nothing changed since the last start), spawn → first complete \`skills/list\` ≤ ${TARGETS.warmRatio}x of (stat floor + bare node) at ${count(skills)} skills: ${verdict(f.warmRatio <= TARGETS.warmRatio)} — ${ms(f.warm)} against ${ms(f.statFloor)} + ${ms(f.bare)} = ${ms(f.statBase)}: **${ratio(f.warmRatio)}** (${warmStretch}; ${ratio(f.warm / f.floor)} of the hashing floor; ${count(f.warmTrusted)} of ${count(f.warmStored)} stored digests trusted).`,
    );
    lines.push(
      `- Warm start after editing 1% of the files (${count(f.editedFiles)} files, ${size(f.editedBytes)}) ≤ warm start + ${TARGETS.editedFactor}x their hashing floor at ${count(skills)} skills: ${verdict(f.warmEdited <= f.editedBound)} — ${ms(f.warmEdited)} against ${ms(f.warm)} + ${TARGETS.editedFactor} × ${ms(f.editedFloor)} = ${ms(f.editedBound)}: **${ratio(f.warmEdited / f.editedBound)}** of the bound (one skill added: ${ms(f.warmAdded)}, ${ratio(f.warmAdded / f.statBase)} of the stat floor + bare node).`,
    );
    const stretch =
      f.watchRatio <= TARGETS.coldStretch
        ? `stretch ${TARGETS.coldStretch}x met too`
        : `stretch ${TARGETS.coldStretch}x not met`;
    lines.push(
      `- Cold start (no digest cache) ≤ ${TARGETS.coldRatio}x of (hashing floor + bare node) at ${count(skills)} skills: ${verdict(f.watchRatio <= TARGETS.coldRatio)} — ${ms(f.watch)} against ${ms(f.floor)} + ${ms(f.bare)} = ${ms(f.base)}: **${ratio(f.watchRatio)}** (${stretch}; \`--no-watch\`: ${ms(f.noWatch)}, ${ratio(f.noWatchRatio)}).`,
    );
    lines.push(
      `- Digest cache ≤ ${TARGETS.cacheBytesPerFile} bytes per file plus paths at ${count(skills)} skills: ${verdict(f.cacheBytesPerFileWithoutPaths <= TARGETS.cacheBytesPerFile)} — ${size(f.cacheBytes)} for ${count(row(item).tree.files)} files: **${f.cacheBytesPerFileWithoutPaths.toFixed(1)} bytes per file** besides the paths (${f.cacheBytesPerFile.toFixed(1)} with them).`,
    );
  }
  const large = at(10_000);
  if (large === undefined) {
    const small = at(1000);
    lines.push(
      `- Peak RSS at 10,000 skills ≤ ${TARGETS.rssWatchMb} MB watching: ${quickNote(1000)}; at 1,000 skills: ${mb(small.f.watchPeakKb)}.`,
    );
    lines.push(
      `- Peak RSS at 10,000 skills ≤ ${TARGETS.rssNoWatchMb} MB with \`--no-watch\`: ${quickNote(1000)}; at 1,000 skills: ${mb(small.f.noWatchPeakKb)}.`,
    );
  } else {
    const { f } = large;
    const worst = Math.max(f.watchPeakKb, f.warmPeakKb);
    lines.push(
      `- Peak RSS at 10,000 skills / 100,000 files ≤ ${TARGETS.rssWatchMb} MB watching (VmHWM once the first list is complete and every directory is watched, worst of the cold and warm starts): ${verdict(mbOf(worst) <= TARGETS.rssWatchMb)} — **${mb(worst)}**, ${ratio(mbOf(worst) / TARGETS.rssWatchMb)} of the target (cold: worst ${mb(f.watchPeakKb)}, median ${mb(f.watchMedianKb)}; warm: worst ${mb(f.warmPeakKb)}, median ${mb(f.warmMedianKb)}).`,
    );
    lines.push(
      `- Peak RSS at 10,000 skills / 100,000 files ≤ ${TARGETS.rssNoWatchMb} MB with \`--no-watch\` (same measure): ${verdict(mbOf(f.noWatchPeakKb) <= TARGETS.rssNoWatchMb)} — **${mb(f.noWatchPeakKb)}**, ${ratio(mbOf(f.noWatchPeakKb) / TARGETS.rssNoWatchMb)} of the target (median ${mb(f.noWatchMedianKb)}).`,
    );
  }
  const liveItem = all.find(({ f }) => f.live !== undefined);
  if (liveItem === undefined || liveItem.row.skills !== 10_000) {
    const note =
      liveItem === undefined
        ? ''
        : `; at ${count(liveItem.row.skills)} skills: median ${ms(liveItem.f.live.median)} (${ms(liveItem.f.live.min)}–${ms(liveItem.f.live.max)}) over ${liveItem.f.live.edits} edits`;
    lines.push(
      `- Single-file edit → \`notifications/resources/updated\` at 10,000 skills ≤ ${TARGETS.liveMs} ms median, debounce included: ${quickNote(1000)}${note}.`,
    );
  } else {
    const { f } = liveItem;
    lines.push(
      `- Single-file edit → \`notifications/resources/updated\` at 10,000 skills ≤ ${TARGETS.liveMs} ms median, debounce (${DEBOUNCE_MS} ms) included: ${verdict(f.live.median <= TARGETS.liveMs)} — median **${ms(f.live.median)}** of ${f.live.edits} edits (${ms(f.live.min)}–${ms(f.live.max)}), ${ratio(f.live.median / TARGETS.liveMs)} of the target; server-side rebuild median ${ms(f.live.rebuild)} (max ${ms(f.live.rebuildMax)}).`,
    );
  }
  const loopOk = all.every(({ f }) => f.probeJudged <= TARGETS.eventLoopMs);
  lines.push(
    `- Event loop never blocked > ${TARGETS.eventLoopMs} ms while indexing (default mode, longest \`ping\` round trip seen by the host from the \`serving\` log line (bundle loaded) to the first complete list, median of ${runs.probes} starts): ${verdict(loopOk)} — ${all.map(({ row, f }) => `${count(row.skills)} skills: **${ms(f.probeJudged)}** (${ratio(f.probeJudged / TARGETS.eventLoopMs)}; per start ${list(f.probeMax, ms)})`).join('; ')}.`,
  );
  const httpItem = all.find(({ f }) => f.http !== undefined);
  if (httpItem !== undefined) {
    const { http } = httpItem.f;
    lines.push(
      `- HTTP throughput ≥ ${TARGETS.httpRps} req/s (3× the peak of a 5,000-developer company) at ${http.clients} keep-alive clients (${count(httpItem.row.skills)} skills): ${verdict(http.server.rps >= TARGETS.httpRps)} — **${http.server.rps.toFixed(0)} req/s** over all rounds; against the bare-server floor ${http.floor.rps.toFixed(0)} req/s: ${ratio(http.pooled)} (median of the ${http.rounds} rounds' ratios ${ratio(http.ratio)}; per round ${list(http.roundRatios, ratio)}).`,
    );
  }
  const readOk = all.every(({ f }) => f.readRatio >= TARGETS.readRatio);
  lines.push(
    `- \`resources/read\` of large files ≥ ${TARGETS.readRatio}x of the pipe floor: ${verdict(readOk)} — ${all.map(({ row, f }) => `${count(row.skills)} skills: ${f.readMBps.toFixed(0)} MB/s against ${f.pipeMBps.toFixed(0)} MB/s, **${ratio(f.readRatio)}**`).join('; ')}.`,
  );
  return lines;
}

/**
 * @returns {{ summary: string, table: string, markdown: string }} the targets and the table alone (for the terminal)
 *   and the whole BENCHMARKS.md.
 */
export function renderReport({
  quick,
  results,
  startup,
  machine,
  loadAfter,
  git,
  date,
  wallSeconds,
  runs,
  loadFigures = LOAD_FIGURES_PLACEHOLDER,
}) {
  const all = results.map((row) => ({ row, f: figures(row) }));
  const header = `| measure | baseline / ratio | ${all.map(({ row }) => `${count(row.skills)} skills`).join(' | ')} |`;
  const rule = `|---|---|${all.map(() => '---:').join('|')}|`;
  const line = (measure, baseline, cell) =>
    `| ${measure} | ${baseline} | ${all.map((item) => cell(item)).join(' | ')} |`;
  const startRuns =
    (key) =>
    ({ row }) =>
      list(
        row.starts[key].map((run) => run.listMs),
        ms,
      );
  const rows = [
    line(
      'tree: files, bytes, directories (large assets)',
      '',
      ({ row }) =>
        `${count(row.tree.files)} files, ${size(row.tree.bytes)}, ${count(row.tree.dirs)} dirs (${row.tree.large.length} large, ${size(row.tree.large.reduce((sum, item) => sum + item.size, 0))})`,
    ),
    line(
      `**floor**: sync walk + readFileSync + sha256, one thread, fresh process, median of ${runs.rounds}`,
      '(baseline)',
      ({ f, row }) =>
        `${ms(f.floor)} (${list(
          row.starts.floor.map((run) => run.ms),
          ms,
        )})`,
    ),
    line(
      `**stat floor**: sync walk + lstat of every file, one thread, fresh process, median of ${runs.rounds}`,
      '(baseline) / floor',
      ({ f, row }) =>
        `${ms(f.statFloor)} · ${ratio(f.statFloor / f.floor)} (${list(
          row.starts.statFloor.map((run) => run.ms),
          ms,
        )})`,
    ),
    line(`bare \`node -e 0\` spawn → exit, median of ${runs.rounds}`, '(baseline)', ({ f }) => ms(f.bare)),
    line(
      '**warm start**, default mode (watching), nothing changed since the last start: spawn → first complete `skills/list`, median of ' +
        runs.rounds,
      `/ (stat floor + bare node); target ≤ ${TARGETS.warmRatio}x`,
      (item) => `**${ms(item.f.warm)}** · **${ratio(item.f.warmRatio)}** (${startRuns('warm')(item)})`,
    ),
    line(
      '… warm, after editing 1% of the files; their hashing floor (readFileSync + sha256)',
      `/ (warm + ${TARGETS.editedFactor} × their floor)`,
      (item) =>
        `${ms(item.f.warmEdited)} · ${ratio(item.f.warmEdited / item.f.editedBound)} (${startRuns('warmEdited')(item)}); ${ms(item.f.editedFloor)} for ${count(item.f.editedFiles)} files, ${size(item.f.editedBytes)}`,
    ),
    line(
      '… warm, after adding one skill (10 files)',
      '/ (stat floor + bare node)',
      (item) =>
        `${ms(item.f.warmAdded)} · ${ratio(item.f.warmAdded / item.f.statBase)} (${startRuns('warmAdded')(item)})`,
    ),
    line(
      '… warm: first build, server side; stored digests trusted',
      '/ stat floor',
      ({ f }) =>
        `${ms(f.builtWarm)} · ${ratio(f.builtWarm / f.statFloor)}; ${count(f.warmTrusted)} of ${count(f.warmStored)}`,
    ),
    line(
      'digest cache file (written by the cold `--no-watch` start)',
      'bytes per file (without paths)',
      ({ f }) =>
        `${size(f.cacheBytes)} · ${f.cacheBytesPerFile.toFixed(1)} (${f.cacheBytesPerFileWithoutPaths.toFixed(1)})`,
    ),
    line(
      '**cold start**, default mode (watching), no digest cache: spawn → first complete `skills/list` (all pages), median of ' +
        runs.rounds,
      `/ (floor + bare node); target ≤ ${TARGETS.coldRatio}x`,
      (item) => `**${ms(item.f.watch)}** · **${ratio(item.f.watchRatio)}** (${startRuns('watch')(item)})`,
    ),
    line(
      `cold \`--no-watch\`: spawn → first complete \`skills/list\`, median of ${runs.rounds}`,
      '/ (floor + bare node)',
      (item) => `${ms(item.f.noWatch)} · ${ratio(item.f.noWatchRatio)} (${startRuns('noWatch')(item)})`,
    ),
    line(
      '… of which the first build, server side (`index-built` log `ms`): default; `--no-watch`',
      '/ floor',
      ({ f }) =>
        `${ms(f.builtWatch)} · ${ratio(f.builtWatch / f.floor)}; ${ms(f.builtNoWatch)} · ${ratio(f.builtNoWatch / f.floor)}`,
    ),
    line(
      'default mode: spawn → `serving` log line (bundle loaded, transport listening), median',
      '/ bare node',
      ({ f }) => `${ms(f.serving)} · ${ratio(f.serving / f.bare)}`,
    ),
    line(
      `default mode: spawn → \`initialize\` answer (answered at once; the build goes on), median`,
      '/ bare node',
      ({ f }) => `${ms(f.init)} · ${ratio(f.init / f.bare)}`,
    ),
    line(
      'default mode: directories watched (`watching` log)',
      '/ directories in the tree',
      ({ row, f }) => `${count(f.watchedDirs)} · ${ratio(f.watchedDirs / (row.tree.dirs + 1))}`,
    ),
    line(
      `**peak RSS, default mode, cold** (VmHWM once the first list is complete and every directory is watched; worst of ${runs.rounds}, median)`,
      `target ≤ ${TARGETS.rssWatchMb} MB at 10,000; / floor process`,
      ({ f }) => `**${mb(f.watchPeakKb)}** (${mb(f.watchMedianKb)}) · ${ratio(f.watchPeakKb / f.floorPeakKb)}`,
    ),
    line(
      '**peak RSS, default mode, warm** (worst of the three warm kinds; median of nothing changed)',
      `target ≤ ${TARGETS.rssWatchMb} MB at 10,000; / floor process`,
      ({ f }) => `**${mb(f.warmPeakKb)}** (${mb(f.warmMedianKb)}) · ${ratio(f.warmPeakKb / f.floorPeakKb)}`,
    ),
    line(
      `**peak RSS, \`--no-watch\`** (same)`,
      `target ≤ ${TARGETS.rssNoWatchMb} MB at 10,000; / floor process`,
      ({ f }) => `**${mb(f.noWatchPeakKb)}** (${mb(f.noWatchMedianKb)}) · ${ratio(f.noWatchPeakKb / f.floorPeakKb)}`,
    ),
    line('peak RSS: floor process', '(baseline)', ({ f }) => mb(f.floorPeakKb)),
    line(
      `**event loop, host side**: longest \`ping\` round trip, \`serving\` log line → first complete list, default mode (pings every 5 ms), median of ${runs.probes} starts (each start)`,
      `target ≤ ${TARGETS.eventLoopMs} ms`,
      ({ f }) => `**${ms(f.probeJudged)}** · ${ratio(f.probeJudged / TARGETS.eventLoopMs)} (${list(f.probeMax, ms)})`,
    ),
    line(
      '… p99 of those round trips; pings answered (each start)',
      '',
      ({ row, f }) =>
        `${list(f.probeP99, ms)}; ${list(
          row.probes.map((probe) => probe.probe.rtts.length),
          count,
        )}`,
    ),
    line(
      "… probe window: `serving` log line → `index-built` log (since spawn); the longest round trip's ping sent at (each start)",
      '',
      ({ row }) =>
        list(
          row.probes,
          (probe) => `${ms(probe.probe.fromMs)} → ${ms(probe.indexBuiltAt)}, at ${ms(probe.probe.worstSentAtMs)}`,
        ),
    ),
    line('… spawn → first complete list with the probe running (each start)', '/ (floor + bare node)', ({ row, f }) =>
      list(
        row.probes.map((probe) => probe.listMs),
        (value) => `${ms(value)} · ${ratio(value / f.base)}`,
      ),
    ),
    line(
      'event loop, in process: longest lateness of a 5 ms `setInterval` during `buildSnapshot` (one run)',
      `/ ${TARGETS.eventLoopMs} ms`,
      ({ f }) =>
        `${ms(f.inProcess.probeMaxMs)} · ${ratio(f.inProcess.probeMaxMs / TARGETS.eventLoopMs)} (build ${ms(f.inProcess.ms)}, ${mb(f.inProcess.hwmKb)})`,
    ),
    line(
      `full \`skills/list\` enumeration, index built, page size 100, median of ${runs.enumerations}`,
      '/ same number of `ping` round trips',
      ({ row, f }) => `${ms(f.enumeration)} (${row.built.pages} pages) · ${ratio(f.enumeration / f.ping)}`,
    ),
    line(
      '**`resources/read` of every large file** once (base64 blobs), default mode',
      `/ pipe floor; target ≥ ${TARGETS.readRatio}x`,
      ({ row, f }) =>
        `${f.readMBps.toFixed(0)} MB/s (${row.built.reads.files} files, ${ms(row.built.reads.ms)}) · **${ratio(f.readRatio)}** of ${f.pipeMBps.toFixed(0)} MB/s`,
    ),
    line(
      'peak RSS after the large reads (default mode)',
      '/ floor process',
      ({ row, f }) => `${mb(row.built.hwmAfterReadsKb)} · ${ratio(row.built.hwmAfterReadsKb / f.floorPeakKb)}`,
    ),
    line(
      `**write → \`notifications/resources/updated\`**, default mode, median of ${runs.edits} edits (min–max)`,
      `target ≤ ${TARGETS.liveMs} ms at 10,000 (debounce ${DEBOUNCE_MS} ms included)`,
      ({ f }) =>
        f.live === undefined
          ? '—'
          : `**${ms(f.live.median)}** (${ms(f.live.min)}–${ms(f.live.max)}) · ${ratio(f.live.median / TARGETS.liveMs)}`,
    ),
    line('… of which server-side rebuild (`index-updated` log `ms`), median (max); extra rebuilds', '', ({ f }) =>
      f.live === undefined ? '—' : `${ms(f.live.rebuild)} (${ms(f.live.rebuildMax)}); ${f.live.extra}`,
    ),
    line('peak RSS after the edits (default mode)', '/ floor process', ({ row, f }) =>
      row.live === undefined ? '—' : `${mb(row.live.hwmKb)} · ${ratio(row.live.hwmKb / f.floorPeakKb)}`,
    ),
    line(
      `**HTTP**: ${runs.http.clients} keep-alive clients, \`skills/list\` p1 / \`skills/get\` / \`resources/read\` 2:3:5, ${runs.http.rounds} × ${runs.http.seconds} s each side: server`,
      `/ bare node:http floor; target ≥ ${TARGETS.httpRps} req/s`,
      ({ f }) =>
        f.http === undefined
          ? '—'
          : `${f.http.server.rps.toFixed(0)} req/s against ${f.http.floor.rps.toFixed(0)} req/s (all rounds) · median of the round ratios **${ratio(f.http.ratio)}**`,
    ),
    line('… latency p50 / p99: server; floor', '', ({ f }) =>
      f.http === undefined
        ? '—'
        : `${ms(f.http.server.p50)} / ${ms(f.http.server.p99)}; ${ms(f.http.floor.p50)} / ${ms(f.http.floor.p99)}`,
    ),
    line('… server latency p50 per method: list; get; read', '', ({ f }) =>
      f.http === undefined
        ? '—'
        : `${ms(f.http.server.perKind.list.p50)}; ${ms(f.http.server.perKind.get.p50)}; ${ms(f.http.server.perKind.read.p50)}`,
    ),
    line('… req/s per round: server; floor; ratio', '', ({ f }) =>
      f.http === undefined
        ? '—'
        : `${list(f.http.server.perRound, (v) => v.toFixed(0))}; ${list(f.http.floor.perRound, (v) => v.toFixed(0))}; ${list(f.http.roundRatios, ratio)}`,
    ),
    line('… peak RSS of the HTTP server after the load', '/ floor process', ({ f }) =>
      f.http === undefined ? '—' : `${mb(f.http.serverHwmKb)} · ${ratio(f.http.serverHwmKb / f.floorPeakKb)}`,
    ),
  ];
  const table = [header, rule, ...rows].join('\n');

  const checks = [];
  for (const { row, f } of all) {
    const name = `${count(row.skills)} skills`;
    for (const [mode, starts] of [
      ['default', row.starts.watch],
      ['--no-watch', row.starts.noWatch],
      ['warm', row.starts.warm],
      ['warm edited', row.starts.warmEdited],
      ['probe', row.probes],
    ]) {
      for (const start of starts) {
        if (start.skills !== row.skills) checks.push(`${name}: a ${mode} start listed ${start.skills} skills`);
        if (start.files !== row.tree.files)
          checks.push(`${name}: a ${mode} start listed ${start.files} files of ${row.tree.files}`);
      }
    }
    for (const run of row.starts.floor)
      if (run.files !== row.tree.files || run.bytes !== row.tree.bytes)
        checks.push(`${name}: the floor read ${run.files} files / ${run.bytes} bytes`);
    if (f.inProcess.skills !== row.skills || f.inProcess.files !== row.tree.files)
      checks.push(`${name}: buildSnapshot published ${f.inProcess.skills} skills / ${f.inProcess.files} files`);
    if (f.inProcess.bytes !== row.tree.bytes)
      checks.push(`${name}: buildSnapshot indexed ${f.inProcess.bytes} bytes of ${row.tree.bytes}`);
    if (f.inProcess.diagnostics > 0)
      checks.push(`${name}: buildSnapshot reported ${f.inProcess.diagnostics} diagnostics`);
    if (f.watchedDirs !== row.tree.dirs + 1)
      checks.push(`${name}: the watcher watched ${f.watchedDirs} directories of ${row.tree.dirs + 1}`);
    if (f.http !== undefined) {
      for (const side of ['server', 'floor']) {
        if (f.http[side].errors > 0)
          checks.push(`${name}: HTTP ${side}: ${f.http[side].errors} errors (first: ${f.http[side].firstError})`);
        if (f.http[side].mismatches > 0)
          checks.push(`${name}: HTTP ${side}: ${f.http[side].mismatches} answers differed from the recorded ones`);
      }
    }
  }

  const summary = `## Targets\n\n${targetLines(all, runs, startup).join('\n')}`;
  const load = (m) => `load average ${m.loadavg.map((n) => n.toFixed(2)).join(', ')} (\`uptime\`: \`${m.uptime}\`)`;
  const markdown = `# Benchmarks

Generated by \`npm run bench${quick ? ' -- --quick' : ''}\` (bench/run.mjs) on ${date}; the whole run took ${wallSeconds.toFixed(0)} s.
Do not edit by hand: re-run the benchmark.

## Machine

- CPU: ${machine.cpu}, ${machine.cores} cores; memory ${machine.memGiB.toFixed(1)} GiB; ${machine.platform}
- Node ${machine.node}
- Load when the run started: ${load(machine)}
- Load when it ended: ${load(loadAfter)}
- The machine is shared: other engineers run tests on it during the run. Absolute figures taken under load are
  noisier and slower; **compare ratios within one run** (every floor is measured in the same run, interleaved with
  what it is compared to), not absolute figures across runs.
- Code: commit ${git.commit}${git.dirty.length > 0 ? `, with uncommitted changes in ${git.dirty.map((item) => `\`${item.slice(3)}\``).join(', ')}` : ''} (\`dist/\` built by \`npm run bench\` from the working tree, then copied aside for the run).

${summary}

## Results

${table}

Ratios in **bold** are the ones the targets are judged on. "x" divides the figure by its baseline. MB = 10^6 bytes
everywhere (RSS too: VmHWM kB × 1024 / 10^6).
${checks.length > 0 ? `\nSanity checks that failed (figures above may not compare like with like):\n${checks.map((item) => `- ${item}`).join('\n')}\n` : '\nSanity checks: every start listed every skill and file of its tree; the floor and `buildSnapshot` read every file and byte; the watcher watched every directory; every HTTP answer was a 200 equal to the recorded one.\n'}
## How it is measured

- **Trees** (\`bench/bench-tree.ts\` on \`bench/tree.ts\`, the layout of the synthetic generator): skills in 50 group folders,
  each a directory with \`references/\`, \`scripts/\` and \`assets/\` (4 directories per skill) holding 10 files
  (SKILL.md, 6 references, 2 scripts, 1 asset), mostly a few kB; one skill in 44 has a binary asset of 1.25–8 MiB
  (8, 1.25, 5, 1.5, 4, 2, 3, 1.25 MiB, cycled), all over ${Number.isFinite(SYNC_HASH_MAX_BYTES) ? `${SYNC_HASH_MAX_BYTES / 2 ** 20} MiB` : 'the synchronous-hash limit'} so they are hashed off the walk (asynchronous reads), served as base64 blobs, and
  every skill is under the 16 MiB limit. Written under \`os.tmpdir()\`, flushed with \`sync\` (not timed), deleted at
  the end. The trees were just written, so they are in the page cache for every measurement (dropping it needs root).
- **What runs**: \`npm run bench\` builds \`dist/\`, and \`bench/run.mjs\` copies \`bin/skills-serve.js\` and \`dist/*.js\`
  into its work directory and runs that copy (\`node <copy>/bin/skills-serve.js [flags] <root>\`), so a rebuild by
  someone else during the run changes nothing measured.
- **Starts** (bench/start.mjs, over real pipes with the minimal JSON-RPC client of bench/stdio.mjs): spawn →
  \`initialize\` (2025-11-25) → \`skills/list\` sent at once, then every next page; the time is spawn → last page.
  Peak RSS is \`/proc/<pid>/status\` VmHWM read right after that page. Per tree, ${runs.rounds} rounds of: a bare
  \`node -e 0\` spawn → exit; the **floor** in a fresh process (bench/harness.ts: synchronous recursive
  \`readdirSync(withFileTypes)\` + \`readFileSync\` + \`createHash('sha256')\` of every file, no parsing, one thread,
  its first and only run, timed inside the process); the **default mode** (no flags: watching on); \`--no-watch\`.
  Each figure is the median of its ${runs.rounds}; the ratio is server / (floor + bare node). \`initialize\` is
  answered at once, while the first build runs.
- **Event loop, host side**: ${runs.probes} more default-mode starts. From the \`serving\` log line (the bundle is
  loaded: a recorded \`initialize\` answer goes out before it loads, ARCHITECTURE "Answering ahead") until the first
  complete list, the client sends \`ping\` every 5 ms without waiting for answers and records each round trip (the
  whole build is probed). A ping is
  answered only when the server's loop runs, so the longest round trip is (to within 5 ms) the longest time the
  server could not answer while indexing, as a host sees it, scheduling on a loaded machine included. Judged on the
  median of the starts' maxima. **In process**: \`buildSnapshot\` (src/index/build.ts, bundled by esbuild at run
  time, as in the server) under a \`setInterval(…, 5)\` whose longest lateness is the
  longest block; one run.
- **Built server** (the last probe start, still running): ${runs.enumerations} full enumerations next to as many \`ping\`s as
  pages; then \`resources/read\` of every large file once (after one untimed read; blobs decoded, sizes checked, the
  first digest checked), next to the **pipe floor**: a Node child answering the same requests with
  \`readFileSync(path).toString('base64')\` in the same JSON-RPC shape (the line concatenated around the blob), read
  by the same client.
- **Live updates** (bench/live.mjs, on that same watching server, at ${count(runs.liveSkills)} skills): per edit,
  \`resources/subscribe\` a reference file, overwrite it, time until \`notifications/resources/updated\` for it
  arrives (the ${DEBOUNCE_MS} ms debounce included); ${runs.edits} edits spread over the tree, each once the previous one's rebuilds are over
  (no \`index-updated\` line for 150 ms). The server-side time is the \`ms\` of the \`index-updated\` log line.
- **HTTP** (bench/http.mjs, ${count(runs.http.skills ?? 1000)} skills): \`node bin/skills-serve.js --http 127.0.0.1:0 <root>\`, the port read from its
  \`serving\` log line, measured once \`index-built\` is logged. Requests in the 2025-11-25 stateless form: \`POST /mcp\`
  with \`content-type: application/json\`, \`accept: application/json, text/event-stream\`, \`mcp-protocol-version:
  2025-11-25\`, no session; the server answers each with a 200 \`text/event-stream\` of one \`message\` event (headers
  ${
    all
      .find(({ f }) => f.http !== undefined)
      ?.f.http.headers.map(([name, value]) => `\`${name}: ${value}\``)
      .join(', ') ?? 'n/a'
  }, chunked).
  The mix, from the server's own listing: \`skills/list\` first page, \`skills/get\` of 200 skills spread over the tree,
  \`resources/read\` of one small (≤ 16 KiB) file of each, in the ratio 2:3:5. Every distinct request is sent once and
  its answer recorded (status, headers in order, body bytes); the **floor** (bench/http-floor.mjs) is a bare
  \`node:http\` server in a child process answering each request body with those bytes, written the same way (one
  chunk, chunked encoding, keep-alive). ${runs.http.clients} clients share one \`http.Agent\` (keepAlive, maxSockets
  ${runs.http.clients}) per target, each sending its next request when its last one is answered; after ${runs.http.warmupSeconds} s of warm-up on each,
  server and floor alternate, ${runs.http.seconds} s each, in ${runs.http.rounds} rounds (server, then floor); the target is judged on the median of the rounds' ratios. Every answer is checked (200, body equal to the recorded one).
  The client runs in the benchmark process on the same 2 cores as the server it loads.

## Reproduce

\`\`\`sh
npm ci
npm run bench              # full: 1,000 and 10,000 skills; writes BENCHMARKS.md (a few minutes; ${quick ? 'the full run' : `this one took ${(wallSeconds / 60).toFixed(1)} min`} here)
npm run bench -- --quick   # 1,000 skills, fewer runs; prints the targets and the table, writes the report to $TMPDIR
# without rebuilding: node bench/run.mjs [--quick] [--out FILE] [--keep]
\`\`\`

${LOAD_SECTION}
${loadFigures}
`;
  return { summary, table, markdown };
}

/**
 * The figure blocks of \`npm run bench:load\` in BENCHMARKS.md: bench/load.mjs and bench/load-auth.mjs \`--write\`
 * fill one each, between its markers; \`npm run bench\` keeps both.
 */
export const FIGURE_BLOCKS = {
  load: {
    begin: '<!-- bench:load figures -->',
    end: '<!-- /bench:load figures -->',
    fill: 'node bench/load.mjs --write',
  },
  auth: {
    begin: '<!-- bench:load:auth figures -->',
    end: '<!-- /bench:load:auth figures -->',
    fill: 'node bench/load-auth.mjs --write',
  },
};

const placeholderOf = (block) => `${block.begin}\nNo figures yet: run \`${block.fill}\`.\n${block.end}`;
const LOAD_FIGURES_PLACEHOLDER = Object.values(FIGURE_BLOCKS).map(placeholderOf).join('\n\n');

/** The figure blocks of an existing report (markers included), each or its placeholder, as one markdown string. */
export function loadFiguresOf(markdown) {
  return Object.values(FIGURE_BLOCKS)
    .map((block) => {
      const from = markdown.indexOf(block.begin);
      const to = markdown.indexOf(block.end);
      return from === -1 || to < from ? placeholderOf(block) : markdown.slice(from, to + block.end.length);
    })
    .join('\n\n');
}

/**
 * Replaces one figure block of \`file\` (BENCHMARKS.md) with \`body\`.
 *
 * @param block one of {@link FIGURE_BLOCKS}.
 * @throws Error when the file lacks the block's markers (run \`npm run bench\` first).
 */
export function writeFigureBlock(file, block, body) {
  const text = readFileSync(file, 'utf8');
  const from = text.indexOf(block.begin);
  const to = text.indexOf(block.end);
  if (from === -1 || to < from) throw new Error(`${file} has no ${block.begin} … ${block.end} block`);
  writeFileSync(
    file,
    `${text.slice(0, from)}${block.begin}\n${body}\n${block.end}${text.slice(to + block.end.length)}`,
  );
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

\`bench/load-auth.mjs\`, the **authorized run**: three servers on \`sample-skills\` in one process — open, behind
\`--http-tokens\` with 4 views, and behind \`--auth-issuer\` a real OpenID provider (scripts/test-oidc-provider.mjs)
with \`--auth-claims\` giving the same 4 views, every request with a bearer JWT. The same read requests go to each in
alternating rounds from 32 keep-alive clients, then from one client at a time: throughput against the open server
(target ≥ 0.8x), the p50 that verification adds (target ≤ 0.2 ms), errors and mismatches (target 0), and the RSS
each further view costs. Exits 1 on any error or mismatch.

\`\`\`sh
npm run bench:load                     # build, then both runs (load and soak, then authorized); prints the tables
npm run build && node bench/load.mjs --write && node bench/load-auth.mjs --write   # … and replaces the figures below
node bench/load.mjs --seconds 300 --http-clients 32   # a longer soak, without rebuilding
\`\`\`
`;
