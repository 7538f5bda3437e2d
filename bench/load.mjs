#!/usr/bin/env node
// `npm run bench:load` (after `npm run build`): a load and soak benchmark. N keep-alive HTTP clients on
// one `--http 127.0.0.1:0` server and M stdio sessions (one server process each) mix `skills/list`, `skills/get`,
// `resources/read` and `resources/directory/read` for a bounded time, while a churn process (bench/load-churn.mjs)
// edits, adds, removes, renames, breaks and fixes skills in the tree they all serve. Every read is judged
// (bench/load-tracker.mjs): its bytes must hash to a digest that server published for the URI, and never to one it
// had already replaced before the read was sent. RSS and open descriptors of every server are sampled; the leak
// check compares the mean of the last third of the run with the second third. Once the churn stops, every server's
// catalog must converge to the tree. Prints a markdown table.
//
//   node bench/load.mjs [--http-clients 16] [--stdio 4] [--stdio-concurrency 4] [--seconds 40] [--skills 300]
//                       [--churn-rate 20] [--seed 13] [--sample-ms 500] [--rss-tolerance 0.1] [--rss-slack-mb 8]
//                       [--fd-slack 2] [--json FILE] [--write] [--keep]
//   --write replaces the figures block of BENCHMARKS.md (between the `bench:load` markers) with this run's table.
//
// Exit code 1 when any error or mismatch was seen, a leak check failed, or a catalog did not converge.
import { fork } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { leakCheck, percentile, PublishHistory } from './load-tracker.mjs';
import { FIGURE_BLOCKS, writeFigureBlock } from './report.mjs';
import { killAll, readLines, spawnNode, within } from './stdio.mjs';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const BIN = path.join(REPO, 'bin', 'skills-serve.js');
const { values: flags } = parseArgs({
  options: {
    'http-clients': { type: 'string', default: '16' },
    stdio: { type: 'string', default: '4' },
    'stdio-concurrency': { type: 'string', default: '4' },
    seconds: { type: 'string', default: '40' },
    skills: { type: 'string', default: '300' },
    'churn-rate': { type: 'string', default: '20' },
    seed: { type: 'string', default: '13' },
    'sample-ms': { type: 'string', default: '500' },
    'rss-tolerance': { type: 'string', default: '0.1' },
    'rss-slack-mb': { type: 'string', default: '8' },
    'fd-slack': { type: 'string', default: '2' },
    json: { type: 'string' },
    write: { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
  },
});
const number = (name) => {
  const value = Number(flags[name]);
  if (!Number.isFinite(value) || value < 0) {
    process.stderr.write(`bench:load: --${name} must be a non-negative number, not ${JSON.stringify(flags[name])}\n`);
    process.exit(2);
  }
  return value;
};
const CONFIG = {
  httpClients: number('http-clients'),
  stdioSessions: number('stdio'),
  stdioConcurrency: Math.max(1, number('stdio-concurrency')),
  seconds: number('seconds'),
  skills: Math.max(20, number('skills')),
  churnRate: number('churn-rate'),
  seed: number('seed'),
  sampleMs: Math.max(50, number('sample-ms')),
  rssTolerance: number('rss-tolerance'),
  rssSlackMb: number('rss-slack-mb'),
  fdSlack: number('fd-slack'),
};
/** Mix of operations (weights). */
const MIX = [
  ['resources/read', 55],
  ['skills/get', 20],
  ['resources/directory/read', 15],
  ['skills/list', 10],
];
const REQUEST_TIMEOUT_MS = 30_000;
const CONVERGE_MS = 30_000;
const MAX_SUBSCRIPTIONS = 5_000;

const log = (text) => process.stderr.write(`bench:load: ${text}\n`);
const digestOf = (bytes) => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
const work = mkdtempSync(path.join(os.tmpdir(), 'skills-serve-benchload-'));
const root = path.join(work, 'tree');
let churn;
function cleanup() {
  killAll();
  try {
    churn?.kill('SIGKILL');
  } catch {
    // gone
  }
  if (!flags.keep) rmSync(work, { recursive: true, force: true, maxRetries: 3 });
}
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.once(signal, () => {
    cleanup();
    process.exit(130);
  });
}
const watchdog = setTimeout(
  () => {
    log('still running long after its time; aborting');
    cleanup();
    process.exit(1);
  },
  (CONFIG.seconds + 300) * 1000,
);

// ---- what the churn wrote, and what it took away ------------------------------------------------------------------

/** uri → Set of digests the churn ever put at that path. */
const written = new Map();
/** Skill names the churn removed, renamed away or broke at some point. */
const gone = new Set();
const wasWritten = (uri, digest) => written.get(uri)?.has(digest) === true;
const skillNameOf = (uri) => uri.slice('skill://'.length).split('/')[0];

function startChurn() {
  churn = fork(fileURLToPath(new URL('./load-churn.mjs', import.meta.url)), [], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const waiters = new Map();
  churn.on('message', (message) => {
    if (message.type === 'wrote') {
      let set = written.get(message.uri);
      if (set === undefined) written.set(message.uri, (set = new Set()));
      set.add(message.digest);
    } else if (message.type === 'gone') gone.add(message.skill);
    waiters.get(message.type)?.(message);
  });
  const next = (type, timeoutMs) =>
    within(timeoutMs, `churn ${type}`, new Promise((resolve) => waiters.set(type, resolve)));
  return { next, send: (message) => churn.send(message) };
}

// ---- the catalog as clients have seen it ----------------------------------------------------------------------------

/** Known URIs, to pick requests from (from any server's answers). */
const pool = { skills: new Map(), files: [], fileSet: new Set(), dirs: [], dirSet: new Set() };
/** Drops a file URI of a skill the churn took away (it comes back if an answer shows it again). */
function forget(uri) {
  if (!pool.fileSet.delete(uri)) return;
  const index = pool.files.indexOf(uri);
  pool.files[index] = pool.files.at(-1);
  pool.files.pop();
}
function learn(skill) {
  if (!Array.isArray(skill.resources)) return;
  pool.skills.set(
    skill.uri,
    skill.resources.map((file) => file.uri),
  );
  for (const file of skill.resources) {
    if (!pool.fileSet.has(file.uri)) {
      pool.fileSet.add(file.uri);
      pool.files.push(file.uri);
    }
    const segments = file.uri.split('/');
    for (let end = 3; end < segments.length; end++) {
      const dir = segments.slice(0, end).join('/');
      if (!pool.dirSet.has(dir)) {
        pool.dirSet.add(dir);
        pool.dirs.push(dir);
      }
    }
  }
}
let seed = CONFIG.seed >>> 0 || 1;
function random() {
  seed ^= seed << 13;
  seed >>>= 0;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  seed >>>= 0;
  return seed / 2 ** 32;
}
const pickFrom = (list) => list[Math.floor(random() * list.length)];
function pickOperation() {
  let roll = random() * MIX.reduce((sum, [, weight]) => sum + weight, 0);
  for (const [method, weight] of MIX) {
    roll -= weight;
    if (roll < 0) return method;
  }
  return MIX[0][0];
}

// ---- servers --------------------------------------------------------------------------------------------------------

/** A server process and how to call it: `call(method, params)` → the JSON-RPC response message. */
class ServerProcess {
  constructor(name, child) {
    this.name = name;
    this.child = child;
    this.pid = child.pid;
    this.history = new PublishHistory();
    /** skill, file and directory URI → when an answer first showed it (ms). */
    this.seenAt = new Map();
    this.samples = { rss: [], fds: [] };
    this.stderr = '';
    child.stderr.on('data', (chunk) => {
      this.stderr += chunk;
      if (this.stderr.length > 1_000_000) this.stderr = this.stderr.slice(-500_000);
    });
    this.exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  }

  sample(at) {
    try {
      const rss = Number(/^VmRSS:\s+(\d+)/mu.exec(readFileSync(`/proc/${this.pid}/status`, 'utf8'))?.[1]);
      this.samples.rss.push({ at, value: rss / 1024 });
      this.samples.fds.push({ at, value: readdirSync(`/proc/${this.pid}/fd`).length });
    } catch {
      // exited: the run will report it
    }
  }

  waitForStderr(text, timeoutMs) {
    return within(
      timeoutMs,
      `${this.name}: "${text}" on stderr\n${this.stderr.slice(-2000)}`,
      new Promise((resolve) => {
        const check = () => {
          if (this.stderr.includes(text)) {
            this.child.stderr.off('data', check);
            resolve();
          }
        };
        this.child.stderr.on('data', check);
        check();
      }),
    );
  }
}

class HttpServer extends ServerProcess {
  async start(clients) {
    await this.waitForStderr('index built', 120_000);
    this.port = Number(/"port":(\d+)/u.exec(this.stderr)?.[1]);
    this.agent = new Agent({ keepAlive: true, maxSockets: Math.max(1, clients) });
  }

  call(method, params) {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });
    return new Promise((resolve, reject) => {
      const req = httpRequest(
        {
          agent: this.agent,
          host: '127.0.0.1',
          port: this.port,
          path: '/mcp',
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': '2025-11-25',
          },
        },
        (res) => {
          const chunks = [];
          res.on('data', (chunk) => chunks.push(chunk));
          res.on('error', reject);
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            // An SSE answer may carry notifications first (diagnostics with the first skills/list page): the answer
            // is the message with an id.
            const messages = (res.headers['content-type'] ?? '').includes('text/event-stream')
              ? text
                  .split('\n')
                  .filter((candidate) => candidate.startsWith('data: '))
                  .map((candidate) => candidate.slice('data: '.length))
              : [text];
            try {
              const answer = messages.map((message) => JSON.parse(message)).find((message) => 'id' in message);
              if (answer === undefined) throw new Error('no answer');
              resolve(answer);
            } catch {
              reject(new Error(`HTTP ${res.statusCode}: not a JSON-RPC answer: ${text.slice(0, 200)}`));
            }
          });
        },
      );
      req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy(new Error(`${method} timed out`)));
      req.on('error', reject);
      req.end(body);
    });
  }

  async stop() {
    this.agent?.destroy();
    this.child.kill('SIGTERM');
    return within(15_000, `${this.name} exit`, this.exited).catch(() => {
      this.child.kill('SIGKILL');
      return { code: null, signal: 'SIGKILL' };
    });
  }
}

class StdioServer extends ServerProcess {
  #pending = new Map();
  #nextId = 1;
  #subscribed = new Set();

  constructor(name, child) {
    super(name, child);
    child.stdin.on('error', () => undefined);
    readLines(child.stdout, (line) => this.#onLine(line));
    this.exited.then(({ code, signal }) => {
      for (const { reject } of this.#pending.values()) reject(new Error(`${this.name} exited (${code ?? signal})`));
      this.#pending.clear();
    });
    this.badLines = 0;
  }

  #onLine(line) {
    let message;
    try {
      message = JSON.parse(line.toString('utf8'));
    } catch {
      this.badLines++;
      return;
    }
    if (message.method === 'notifications/resources/updated')
      this.history.replaced(message.params.uri, performance.now());
    if (message.method !== undefined || message.id === undefined) return;
    const pending = this.#pending.get(message.id);
    if (pending === undefined) return;
    this.#pending.delete(message.id);
    clearTimeout(pending.timer);
    pending.resolve(message);
  }

  call(method, params) {
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new Error(`${method} timed out`));
      }, REQUEST_TIMEOUT_MS);
      this.#pending.set(id, { resolve, reject, timer });
      this.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  }

  /** Asks to hear `notifications/resources/updated` for `uri` (once; not counted as a benchmark request). */
  subscribe(uri) {
    if (this.#subscribed.has(uri) || this.#subscribed.size >= MAX_SUBSCRIPTIONS) return;
    this.#subscribed.add(uri);
    this.call('resources/subscribe', { uri }).catch(() => undefined);
  }

  async start() {
    const answer = await this.call('initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'skills-serve-bench-load', version: '1' },
    });
    if (answer.error) throw new Error(`${this.name}: initialize failed: ${JSON.stringify(answer.error)}`);
    this.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  }

  async stop() {
    this.child.stdin.end();
    return within(15_000, `${this.name} exit`, this.exited).catch(() => {
      this.child.kill('SIGKILL');
      return { code: null, signal: 'SIGKILL' };
    });
  }
}

const serverEnv = { PATH: process.env.PATH ?? '', SKILLS_SERVE_LOG_LEVEL: 'info' };

// ---- the workload ---------------------------------------------------------------------------------------------------

/** Per transport: latencies per method, counts, errors. */
function newStats() {
  return {
    latencies: Object.fromEntries(MIX.map(([method]) => [method, []])),
    requests: 0,
    errors: [],
    notFound: [],
    gone: 0,
  };
}
const stats = { http: newStats(), stdio: newStats() };
/** Every read: { server, uri, digest, sentAt }. */
const reads = [];

/** Full enumeration (every page) of one server; observed into its history. */
async function listAll(server) {
  const skills = [];
  let cursor;
  do {
    const sentAt = performance.now();
    const answer = await server.call('skills/list', cursor === undefined ? {} : { cursor });
    if (answer.error) throw new Error(`${server.name}: skills/list: ${JSON.stringify(answer.error)}`);
    observeSkills(server, answer.result.skills, sentAt, performance.now());
    skills.push(...answer.result.skills);
    cursor = answer.result.nextCursor;
  } while (cursor);
  return skills;
}

function observeSkills(server, skills, sentAt, answeredAt) {
  const seen = (uri) => {
    if (!server.seenAt.has(uri)) server.seenAt.set(uri, answeredAt);
  };
  for (const skill of skills) {
    learn(skill);
    seen(skill.uri);
    if (!Array.isArray(skill.resources)) continue;
    for (const file of skill.resources) {
      server.history.observe(file.uri, file.digest, sentAt, answeredAt);
      seen(file.uri);
      const segments = file.uri.split('/');
      for (let end = 3; end < segments.length; end++) seen(segments.slice(0, end).join('/'));
    }
  }
}

/**
 * Whether a -32602 from `server` for `uri`, sent at `sentAt`, is expected: the churn removed, renamed or broke the
 * skill at some point, or that server had not yet published the URI when the request was sent (the pool of URIs
 * is shared by all servers, which follow the tree each at its own pace). Judged after the run, once every message of
 * the churn is in.
 */
function expectedNotFound(server, uri, sentAt) {
  if (uri === undefined) return false;
  if (gone.has(skillNameOf(uri))) return true;
  const first = server.seenAt.get(uri);
  return first === undefined || first >= sentAt;
}

/** One operation of one client against `server`; records latency, errors and reads. */
async function operate(server, kind, state) {
  const method = pickOperation();
  let params;
  let uri;
  if (method === 'resources/read') params = { uri: (uri = pickFrom(pool.files)) };
  else if (method === 'skills/get') params = { uri: (uri = pickFrom([...pool.skills.keys()])) };
  else if (method === 'resources/directory/read') params = { uri: (uri = pickFrom(pool.dirs)) };
  else params = state.cursor === undefined ? {} : { cursor: state.cursor };
  const bucket = stats[kind];
  const sentAt = performance.now();
  let answer;
  try {
    answer = await server.call(method, params);
  } catch (error) {
    bucket.requests++;
    bucket.errors.push({ server: server.name, method, uri, error: String(error.message ?? error) });
    return;
  }
  const answeredAt = performance.now();
  bucket.requests++;
  bucket.latencies[method].push(answeredAt - sentAt);
  if (answer.error) {
    if (answer.error.code === -32602) {
      bucket.notFound.push({ server, method, uri, sentAt, error: `${answer.error.code} ${answer.error.message}` });
      if (method === 'resources/read' && gone.has(skillNameOf(uri))) forget(uri);
    } else
      bucket.errors.push({ server: server.name, method, uri, error: `${answer.error.code} ${answer.error.message}` });
    if (method === 'skills/list') state.cursor = undefined;
    return;
  }
  if (method === 'skills/list') {
    observeSkills(server, answer.result.skills, sentAt, answeredAt);
    state.cursor = answer.result.nextCursor;
  } else if (method === 'skills/get') {
    observeSkills(server, [answer.result.skill], sentAt, answeredAt);
  } else if (method === 'resources/read') {
    const content = answer.result.contents?.[0] ?? {};
    const bytes =
      typeof content.text === 'string' ? Buffer.from(content.text, 'utf8') : Buffer.from(content.blob ?? '', 'base64');
    const digest = digestOf(bytes);
    reads.push({ server, uri, digest, sentAt });
    server.subscribe?.(uri);
    // Bytes of a version no answer has shown yet: ask for the skill's entry at once, so that the history sees it.
    if (!server.history.has(uri, digest)) {
      const skillUri = `skill://${skillNameOf(uri)}/SKILL.md`;
      const confirmAt = performance.now();
      const entry = await server.call('skills/get', { uri: skillUri }).catch(() => undefined);
      if (entry?.result?.skill) observeSkills(server, [entry.result.skill], confirmAt, performance.now());
    }
  }
}

async function clientLoop(server, kind, deadline) {
  const state = { cursor: undefined };
  while (performance.now() < deadline) await operate(server, kind, state);
}

// ---- figures --------------------------------------------------------------------------------------------------------

const ms = (value) => (Number.isNaN(value) ? '—' : value < 10 ? `${value.toFixed(2)} ms` : `${value.toFixed(1)} ms`);
const mb = (value) => `${value.toFixed(1)} MB`;

function transportFigures(bucket, seconds) {
  for (const item of bucket.notFound) {
    if (expectedNotFound(item.server, item.uri, item.sentAt)) bucket.gone++;
    else bucket.errors.push({ server: item.server.name, method: item.method, uri: item.uri, error: item.error });
  }
  bucket.notFound = [];
  const all = Object.values(bucket.latencies).flat();
  const perMethod = Object.fromEntries(
    Object.entries(bucket.latencies).map(([method, values]) => [
      method,
      { count: values.length, p50: percentile(values, 0.5), p99: percentile(values, 0.99) },
    ]),
  );
  return {
    requests: bucket.requests,
    throughput: bucket.requests / seconds,
    p50: percentile(all, 0.5),
    p99: percentile(all, 0.99),
    perMethod,
    errors: bucket.errors.length,
    gone: bucket.gone,
  };
}

function verdicts(kindOf) {
  const counts = { ok: 0, stale: 0, unobserved: 0, foreign: 0 };
  const examples = [];
  for (const read of reads) {
    if (kindOf(read.server) === undefined) continue;
    const verdict = read.server.history.judge(read.uri, read.digest, read.sentAt, wasWritten);
    counts[verdict]++;
    if ((verdict === 'stale' || verdict === 'foreign') && examples.length < 10)
      examples.push({ server: read.server.name, uri: read.uri, digest: read.digest, verdict });
  }
  return { counts, examples };
}

function resourceFigures(servers, from) {
  const tolerance = { relative: CONFIG.rssTolerance, absolute: CONFIG.rssSlackMb };
  const fdTolerance = { relative: 0.1, absolute: CONFIG.fdSlack };
  return servers.map((server) => {
    const rss = server.samples.rss.filter((sample) => sample.at >= from);
    const fds = server.samples.fds.filter((sample) => sample.at >= from);
    return {
      name: server.name,
      rssStart: rss[0]?.value ?? Number.NaN,
      rssMax: Math.max(...rss.map((sample) => sample.value)),
      rssLeak: leakCheck(rss, tolerance),
      fdStart: fds[0]?.value ?? Number.NaN,
      fdMax: Math.max(...fds.map((sample) => sample.value)),
      fdLeak: leakCheck(fds, fdTolerance),
      samples: rss.length,
    };
  });
}

function renderTable(result) {
  const { http, stdio, readsHttp, readsStdio, resources, churnOps, converged, config } = result;
  const cell = (figures, render) => (figures === undefined ? '—' : render(figures));
  const methods = MIX.map(([method]) => method);
  const rows = [
    [
      'requests (all answered)',
      cell(http, (f) => f.requests.toLocaleString('en-US')),
      cell(stdio, (f) => f.requests.toLocaleString('en-US')),
    ],
    [
      'throughput',
      cell(http, (f) => `${f.throughput.toFixed(0)} req/s`),
      cell(stdio, (f) => `${f.throughput.toFixed(0)} req/s`),
    ],
    [
      'latency p50 / p99, all methods',
      cell(http, (f) => `${ms(f.p50)} / ${ms(f.p99)}`),
      cell(stdio, (f) => `${ms(f.p50)} / ${ms(f.p99)}`),
    ],
    ...methods.map((method) => [
      `… \`${method}\` (count; p50 / p99)`,
      cell(
        http,
        (f) =>
          `${f.perMethod[method].count.toLocaleString('en-US')}; ${ms(f.perMethod[method].p50)} / ${ms(f.perMethod[method].p99)}`,
      ),
      cell(
        stdio,
        (f) =>
          `${f.perMethod[method].count.toLocaleString('en-US')}; ${ms(f.perMethod[method].p50)} / ${ms(f.perMethod[method].p99)}`,
      ),
    ]),
    [
      '**errors** (anything but a result or an expected -32602)',
      cell(http, (f) => `**${f.errors}**`),
      cell(stdio, (f) => `**${f.errors}**`),
    ],
    [
      '-32602 for URIs the churn took away, or not yet published by that server (expected)',
      cell(http, (f) => String(f.gone)),
      cell(stdio, (f) => String(f.gone)),
    ],
    [
      '**mismatches**: stale + foreign reads',
      `**${readsHttp.counts.stale + readsHttp.counts.foreign}** (${readsHttp.counts.stale} + ${readsHttp.counts.foreign})`,
      `**${readsStdio.counts.stale + readsStdio.counts.foreign}** (${readsStdio.counts.stale} + ${readsStdio.counts.foreign})`,
    ],
    [
      'reads judged ok; unobserved (consistent, version not seen listed)',
      `${readsHttp.counts.ok}; ${readsHttp.counts.unobserved}`,
      `${readsStdio.counts.ok}; ${readsStdio.counts.unobserved}`,
    ],
  ];
  const byKind = (kind) => resources.filter((item) => item.name.startsWith(kind));
  const rssCell = (items) =>
    items.length === 0
      ? '—'
      : items
          .map(
            (item) =>
              `${mb(item.rssStart)} → ${mb(item.rssLeak.second)} → ${mb(item.rssLeak.last)} (max ${mb(item.rssMax)})`,
          )
          .join('<br>');
  const fdCell = (items) =>
    items.length === 0
      ? '—'
      : items
          .map(
            (item) =>
              `${item.fdStart} → ${item.fdLeak.second.toFixed(1)} → ${item.fdLeak.last.toFixed(1)} (max ${item.fdMax})`,
          )
          .join('<br>');
  const leakCell = (items) =>
    items.length === 0
      ? '—'
      : items
          .map(
            (item) =>
              `${item.rssLeak.ok && item.fdLeak.ok ? '**pass**' : '**FAIL**'}: RSS ${item.rssLeak.growth >= 0 ? '+' : ''}${item.rssLeak.growth.toFixed(1)} MB (≤ ${item.rssLeak.allowed.toFixed(1)}), fds ${item.fdLeak.growth >= 0 ? '+' : ''}${item.fdLeak.growth.toFixed(1)} (≤ ${item.fdLeak.allowed.toFixed(1)})`,
          )
          .join('<br>');
  rows.push(
    [
      'RSS per server: first sample → mean of 2nd third → mean of last third',
      rssCell(byKind('http')),
      rssCell(byKind('stdio')),
    ],
    ['open descriptors per server: first → 2nd third → last third', fdCell(byKind('http')), fdCell(byKind('stdio'))],
    ['**leak check** (last third − 2nd third)', leakCell(byKind('http')), leakCell(byKind('stdio'))],
    [
      'catalog equal to the tree after the churn stopped',
      cell(http, () => converged.http),
      cell(stdio, () => converged.stdio),
    ],
  );
  const header = `| measure | HTTP: ${config.httpClients} keep-alive clients, 1 server | stdio: ${config.stdioSessions} sessions × ${config.stdioConcurrency} in flight, ${config.stdioSessions} servers |\n|---|---:|---:|`;
  const churnLine = Object.entries(churnOps)
    .map(([kind, count]) => `${count} ${kind}`)
    .join(', ');
  return [
    header,
    ...rows.map((row) => `| ${row.join(' | ')} |`),
    '',
    `Tree: ${config.skills} skills at start (4–5 files each, one in ten with a 64–256 KiB binary); churn ${config.churnRate} operations/s for ${config.seconds} s: ${churnLine}. ` +
      `Leak tolerance: RSS ≤ max(${(config.rssTolerance * 100).toFixed(0)}%, ${config.rssSlackMb} MB), descriptors ≤ max(10%, ${config.fdSlack}); samples every ${config.sampleMs} ms during the load.`,
  ].join('\n');
}

// ---- the run --------------------------------------------------------------------------------------------------------

async function converge(server, model) {
  const want = JSON.stringify(model);
  const started = performance.now();
  let last = '';
  while (performance.now() - started < CONVERGE_MS) {
    const skills = (await listAll(server))
      .map((skill) => ({
        uri: skill.uri,
        resources: (Array.isArray(skill.resources) ? skill.resources : [])
          .map(({ uri, digest, size }) => ({ uri, digest, size }))
          .sort((a, b) => (a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : 0)),
      }))
      .sort((a, b) => (a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : 0));
    last = JSON.stringify(skills);
    if (last === want) return performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const listed = new Set(JSON.parse(last).map((skill) => skill.uri));
  const expected = new Set(model.map((skill) => skill.uri));
  log(
    `${server.name} did not converge: ${[...expected].filter((uri) => !listed.has(uri)).length} skills missing, ${[...listed].filter((uri) => !expected.has(uri)).length} extra`,
  );
  return undefined;
}

async function main() {
  if (!existsSync(path.join(REPO, 'dist', 'cli.js')))
    throw new Error('dist/cli.js is missing: run `npm run build` first (npm run bench:load does)');
  log(
    `${CONFIG.httpClients} HTTP clients, ${CONFIG.stdioSessions} stdio sessions, ${CONFIG.seconds} s, ${CONFIG.skills} skills, churn ${CONFIG.churnRate}/s; work dir ${work}`,
  );
  const writer = startChurn();
  writer.send({ type: 'init', root, skills: CONFIG.skills, seed: CONFIG.seed });
  await writer.next('ready', 120_000);

  const servers = [];
  const http =
    CONFIG.httpClients > 0
      ? new HttpServer('http', spawnNode([BIN, '--http', '127.0.0.1:0', root], { env: serverEnv }))
      : undefined;
  if (http !== undefined) servers.push(http);
  const stdioServers = Array.from(
    { length: CONFIG.stdioSessions },
    (_, index) => new StdioServer(`stdio-${index + 1}`, spawnNode([BIN, root], { env: serverEnv })),
  );
  servers.push(...stdioServers);
  await http?.start(CONFIG.httpClients);
  await Promise.all(stdioServers.map((server) => server.start()));
  for (const server of servers) {
    await server.waitForStderr('watching roots for changes', 120_000);
    await listAll(server);
  }
  log(
    `servers ready (${servers.map((server) => `${server.name} pid ${server.pid}`).join(', ')}); load for ${CONFIG.seconds} s`,
  );

  const loadFrom = performance.now();
  const sampler = setInterval(() => {
    const at = performance.now();
    for (const server of servers) server.sample(at);
  }, CONFIG.sampleMs);
  for (const server of servers) server.sample(loadFrom);
  writer.send({ type: 'start', rate: CONFIG.churnRate });
  const deadline = loadFrom + CONFIG.seconds * 1000;
  const loops = [];
  for (let client = 0; client < CONFIG.httpClients; client++) loops.push(clientLoop(http, 'http', deadline));
  for (const server of stdioServers)
    for (let client = 0; client < CONFIG.stdioConcurrency; client++) loops.push(clientLoop(server, 'stdio', deadline));
  await Promise.all(loops);
  const loadSeconds = (performance.now() - loadFrom) / 1000;
  clearInterval(sampler);
  for (const server of servers) server.sample(performance.now());
  writer.send({ type: 'stop' });
  const { ops: churnOps, model } = await writer.next('done', 60_000);

  log('load done; waiting for every catalog to match the tree');
  const convergedMs = await Promise.all(servers.map((server) => converge(server, model)));
  const convergence = (items) => {
    if (items.length === 0) return '—';
    const times = items.map((index) => convergedMs[index]);
    const slowest = Math.max(...times);
    return times.every((time) => time !== undefined)
      ? slowest < 50
        ? 'yes, at the first listing'
        : `yes, within ${(slowest / 1000).toFixed(1)} s`
      : `**NO** (${times.filter((time) => time === undefined).length} of ${times.length})`;
  };
  const httpIndexes = http === undefined ? [] : [0];
  const stdioIndexes = stdioServers.map((_, index) => index + httpIndexes.length);
  const exits = await Promise.all(servers.map((server) => server.stop()));

  const result = {
    config: CONFIG,
    loadSeconds,
    http: http === undefined ? undefined : transportFigures(stats.http, loadSeconds),
    stdio: stdioServers.length === 0 ? undefined : transportFigures(stats.stdio, loadSeconds),
    readsHttp: verdicts((server) => (server === http ? 'http' : undefined)),
    readsStdio: verdicts((server) => (server !== http ? 'stdio' : undefined)),
    resources: resourceFigures(servers, loadFrom),
    churnOps,
    converged: { http: convergence(httpIndexes), stdio: convergence(stdioIndexes) },
    exits: servers.map((server, index) => ({ name: server.name, ...exits[index] })),
    badStdoutLines: stdioServers.reduce((sum, server) => sum + server.badLines, 0),
    errorExamples: [...stats.http.errors, ...stats.stdio.errors].slice(0, 10),
    machine: { cpu: os.cpus()[0]?.model, cores: os.cpus().length, node: process.version, loadavg: os.loadavg() },
    date: new Date().toISOString(),
  };
  const table = renderTable(result);
  process.stdout.write(`${table}\n`);
  const jsonOut = flags.json ?? path.join(os.tmpdir(), 'skills-serve-bench-load.json');
  writeFileSync(jsonOut, `${JSON.stringify(result, (key, value) => (key === 'history' ? undefined : value), 2)}\n`);
  log(`raw figures in ${jsonOut}`);
  if (result.errorExamples.length > 0)
    log(`errors, first ${result.errorExamples.length}: ${JSON.stringify(result.errorExamples, null, 1)}`);
  const mismatchExamples = [...result.readsHttp.examples, ...result.readsStdio.examples];
  if (mismatchExamples.length > 0)
    log(`mismatches, first ${mismatchExamples.length}: ${JSON.stringify(mismatchExamples, null, 1)}`);
  if (flags.write) writeFigures(table, result);

  const failed =
    (result.http?.errors ?? 0) + (result.stdio?.errors ?? 0) > 0 ||
    result.readsHttp.counts.stale +
      result.readsHttp.counts.foreign +
      result.readsStdio.counts.stale +
      result.readsStdio.counts.foreign >
      0 ||
    result.resources.some((item) => !item.rssLeak.ok || !item.fdLeak.ok) ||
    convergedMs.some((time) => time === undefined) ||
    result.badStdoutLines > 0 ||
    result.exits.some((exit) => exit.code !== 0);
  if (failed) log('FAILED: see the table (errors, mismatches, leak check, convergence, exits)');
  return failed ? 1 : 0;
}

/** Replaces the bench:load figures of BENCHMARKS.md with this run's table. */
function writeFigures(table, result) {
  const command = `node bench/load.mjs --http-clients ${CONFIG.httpClients} --stdio ${CONFIG.stdioSessions} --seconds ${CONFIG.seconds} --skills ${CONFIG.skills} --churn-rate ${CONFIG.churnRate}`;
  const { date, machine } = result;
  writeFigureBlock(
    path.join(REPO, 'BENCHMARKS.md'),
    FIGURE_BLOCKS.load,
    `Run ${date} on ${machine.cpu} (${machine.cores} cores), Node ${machine.node}, load average ${machine.loadavg.map((n) => n.toFixed(2)).join(' ')}: \`${command}\`\n\n${table}`,
  );
  log('figures written to BENCHMARKS.md');
}

main()
  .then((code) => {
    clearTimeout(watchdog);
    cleanup();
    process.exitCode = code;
  })
  .catch((error) => {
    process.stderr.write(`bench:load: failed: ${error.stack ?? error}\n`);
    clearTimeout(watchdog);
    cleanup();
    process.exitCode = 1;
  });
