#!/usr/bin/env node
// The authorized run of `npm run bench:load` (after `npm run build`): three servers over the same tree, one open, one
// behind `--http-tokens` with 4 views, and one behind `--auth-issuer` a real OpenID provider started in this process
// (scripts/test-oidc-provider.mjs), with `--auth-claims` giving the same 4 views. The same requests (the four
// read methods, each for a skill of the view) go to each in rounds (each round starting with the next
// server), from 32 keep-alive clients (each a host: one view's token on its connection, 8 clients a view), then to
// the authorized server with the 4 tokens taking turns on every connection (a gateway that pools its upstream
// connections), then from one client at a time (tokens taking turns), through the lean client of raw-http.mjs:
// throughput (authorized / open, the median of the rounds' ratios), the server's and the client's CPU per request,
// p50 and p99 latency, the p50 that verification adds, errors and mismatches (any answer other than 200 with the
// expected URI). Then memory per view: the server's RSS before and after 64 more distinct views were made. Prints a
// markdown table.
//
//   node bench/load-auth.mjs [--clients 32] [--seconds 1.5] [--rounds 10] [--sequential 3000] [--json FILE] [--write]
//
// --write replaces the bench:load:auth figures of BENCHMARKS.md with this run's table.
//
// Exit code 1 when any error or mismatch was seen.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { clientCredentialsToken, startOidcProvider } from '../scripts/test-oidc-provider.mjs';
import { percentile } from './load-tracker.mjs';
import { encodePost, RawConnection } from './raw-http.mjs';
import { FIGURE_BLOCKS, writeFigureBlock } from './report.mjs';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const BIN = path.join(REPO, 'bin', 'skills-serve.js');
const SAMPLE = path.join(REPO, 'sample-skills');
const { values: flags } = parseArgs({
  options: {
    clients: { type: 'string', default: '32' },
    // Short phases, many rounds: this shared machine's speed drifts over tens of seconds (the same server's CPU per
    // request moved 2x between rounds of one run), so the three phases of a round must lie close together.
    seconds: { type: 'string', default: '1.5' },
    rounds: { type: 'string', default: '10' },
    sequential: { type: 'string', default: '3000' },
    json: { type: 'string' },
    write: { type: 'boolean', default: false },
  },
});
const CLIENTS = Number(flags.clients);
const SECONDS = Number(flags.seconds);
const ROUNDS = Number(flags.rounds);
const SEQUENTIAL = Number(flags.sequential);

/** The 4 views: a group each, and a skill each view sees. */
const VIEWS = [
  { group: 'billing', prefix: 'acme/billing', skill: 'acme/billing/refunds' },
  { group: 'support', prefix: 'acme/support', skill: 'acme/support/refunds' },
  { group: 'data', prefix: 'data-pipeline', skill: 'data-pipeline' },
  { group: 'writers', prefix: 'report-writer', skill: 'report-writer' },
];
/** Groups only used to make more views for the memory figure (each subset of them is one view). */
const EXTRA_GROUPS = ['g0', 'g1', 'g2', 'g3', 'g4', 'g5'];

function startServer(args) {
  const child = spawn(process.execPath, [BIN, '--http', '127.0.0.1:0', '--log-level', 'info', ...args], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  return new Promise((resolve, reject) => {
    child.stderr.on('data', (chunk) => {
      // Only the start is kept: the access log is a line per request.
      if (stderr.length < 1_000_000) stderr += chunk;
      const port = /"port":(\d+)/u.exec(stderr)?.[1];
      if (port !== undefined && stderr.includes('index built')) resolve({ child, port: Number(port) });
    });
    child.once('exit', (code) => reject(new Error(`server exited ${code}: ${stderr}`)));
  });
}

/** The CPU time a process has used so far, user and system (ms; /proc/PID/stat, in clock ticks of 10 ms). */
function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

function rssKb(pid) {
  return Number(/VmRSS:\s+(\d+)/u.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
}

/** The requests of one view: its skill's four read methods. */
function requestsOf(view) {
  const uri = `skill://${view.skill}/SKILL.md`;
  return [
    { method: 'resources/read', params: { uri }, expect: uri },
    { method: 'skills/get', params: { uri }, expect: uri },
    { method: 'resources/directory/read', params: { uri: `skill://${view.skill}` }, expect: uri },
    { method: 'skills/list', params: {}, expect: uri },
  ];
}

/** A request's bytes, encoded once (the load client writes them as they are). */
function encode(token, { method, params }) {
  return encodePost(
    '/mcp',
    {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    },
    JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  );
}

/** Sends one encoded request on a connection: its status, body and latency (ms). */
async function call(connection, bytes) {
  const started = performance.now();
  const answer = await connection.request(bytes);
  return { ...answer, ms: performance.now() - started };
}

/**
 * Runs `clients` loops for `seconds` (or `count` requests in all) against one server; returns the figures. Client `c`
 * sends view `c mod 4`'s requests, or, `mixed`, each view's in turn.
 */
async function phase(server, tokens, { clients, seconds, count, mixed = false }) {
  const connections = Array.from({ length: clients }, () => new RawConnection(server.port));
  // Every request of the run, encoded before the clock starts: [view][method].
  const encoded = VIEWS.map((view, index) =>
    requestsOf(view).map((request) => ({ request, bytes: encode(tokens?.[index], request) })),
  );
  const latencies = [];
  let errors = 0;
  let mismatches = 0;
  let sent = 0;
  const deadline = seconds === undefined ? Infinity : performance.now() + seconds * 1000;
  const started = performance.now();
  const cpuBefore = cpuMs(server.child.pid);
  const clientBefore = process.cpuUsage();
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      for (let at = client; performance.now() < deadline && (count === undefined || sent < count); at++) {
        sent++;
        const { request, bytes } = mixed
          ? encoded[at % VIEWS.length][Math.floor(at / VIEWS.length) % 4]
          : encoded[client % VIEWS.length][at % 4];
        try {
          const answer = await call(connections[client], bytes);
          latencies.push(answer.ms);
          if (answer.status !== 200) errors++;
          else if (!answer.text.includes(request.expect)) mismatches++;
        } catch {
          errors++;
        }
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const cpu = cpuMs(server.child.pid) - cpuBefore;
  const { user, system } = process.cpuUsage(clientBefore);
  for (const connection of connections) connection.close();
  return { requests: latencies.length, elapsed, cpu, clientCpu: (user + system) / 1000, errors, mismatches, latencies };
}

function summarize(runs) {
  const latencies = runs.flatMap((run) => run.latencies);
  const requests = runs.reduce((sum, run) => sum + run.requests, 0);
  const elapsed = runs.reduce((sum, run) => sum + run.elapsed, 0);
  return {
    requests,
    perSecond: requests / elapsed,
    // The server's CPU per answer (µs): what a request costs it, whether or not the clients kept it busy.
    cpuUs: (runs.reduce((sum, run) => sum + run.cpu, 0) * 1000) / requests,
    // The load client's (this process's) CPU per answer (µs): it shares the machine with the server.
    clientUs: (runs.reduce((sum, run) => sum + run.clientCpu, 0) * 1000) / requests,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    errors: runs.reduce((sum, run) => sum + run.errors, 0),
    mismatches: runs.reduce((sum, run) => sum + run.mismatches, 0),
  };
}

async function main() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'skills-serve-load-auth-'));
  const provider = await startOidcProvider({ ttl: 3600 });
  const servers = [];
  try {
    const claims = path.join(dir, 'claims.json');
    writeFileSync(
      claims,
      JSON.stringify({
        claims: [
          ...VIEWS.map(({ group, prefix }) => ({ name: group, claim: 'groups', value: group, prefixes: [prefix] })),
          ...EXTRA_GROUPS.map((group, index) => ({
            name: group,
            claim: 'groups',
            value: group,
            prefixes: [`extra/${index}`],
          })),
        ],
      }),
    );
    const tokensFile = path.join(dir, 'tokens.json');
    const staticTokens = VIEWS.map(({ group }) => `${group}-static-token-0123456789`);
    writeFileSync(
      tokensFile,
      JSON.stringify({
        tokens: VIEWS.map(({ group, prefix }, index) => ({
          name: group,
          token: staticTokens[index],
          prefixes: [prefix],
        })),
      }),
    );
    const open = await startServer([SAMPLE]);
    servers.push(open);
    const viewsOnly = await startServer(['--http-tokens', tokensFile, SAMPLE]);
    servers.push(viewsOnly);
    const authorized = await startServer(['--auth-issuer', provider.issuer, '--auth-claims', claims, SAMPLE]);
    servers.push(authorized);
    const resource = `http://127.0.0.1:${authorized.port}/mcp`;
    provider.setResource(resource);
    const tokenFor = async (groups) => {
      provider.groups['skills-agent'] = groups;
      return clientCredentialsToken(provider.issuer, provider.clients.machine, resource);
    };
    const tokens = [];
    for (const { group } of VIEWS) tokens.push(await tokenFor([group]));
    // Warm both (JIT, the JWKS fetch, the views' handlers).
    await phase(open, undefined, { clients: 4, count: 2000 });
    await phase(authorized, tokens, { clients: 4, count: 2000 });
    await phase(viewsOnly, staticTokens, { clients: 4, count: 2000 });
    const concurrent = { open: [], authorized: [], views: [], gateway: [] };
    const sequential = { open: [], authorized: [], views: [] };
    const kinds = [
      ['open', open, undefined, false],
      ['authorized', authorized, tokens, false],
      ['views', viewsOnly, staticTokens, false],
      ['gateway', authorized, tokens, true],
    ];
    for (let round = 0; round < ROUNDS; round++) {
      // Each round starts with the next kind, so none is always measured first (or last) in a round.
      for (let turn = 0; turn < kinds.length; turn++) {
        const [kind, server, credentials, mixed] = kinds[(round + turn) % kinds.length];
        concurrent[kind].push(await phase(server, credentials, { clients: CLIENTS, seconds: SECONDS, mixed }));
      }
      for (let turn = 0; turn < 3; turn++) {
        const [kind, server, credentials] = kinds[(round + turn) % 3];
        sequential[kind].push(
          await phase(server, credentials, { clients: 1, count: Math.ceil(SEQUENTIAL / ROUNDS), mixed: true }),
        );
      }
    }
    /** Per round, one server's throughput over another's, measured seconds apart in the same round; ascending. */
    const roundRatios = (a, b) =>
      concurrent[a]
        .map(
          (run, round) => run.requests / run.elapsed / (concurrent[b][round].requests / concurrent[b][round].elapsed),
        )
        .sort((x, y) => x - y);
    /** The median of {@link roundRatios}. */
    const roundRatio = (a, b) => percentile(roundRatios(a, b), 0.5);
    // Memory per view: 64 more distinct prefix sets (subsets of the extra groups), each served once.
    const before = rssKb(authorized.child.pid);
    const connection = new RawConnection(authorized.port);
    let made = 0;
    for (let mask = 1; mask < 2 ** EXTRA_GROUPS.length; mask++) {
      const groups = EXTRA_GROUPS.filter((_, bit) => (mask >> bit) & 1);
      const token = await tokenFor(['billing', ...groups]);
      const answer = await call(connection, encode(token, requestsOf(VIEWS[0])[3]));
      if (answer.status === 200) made++;
    }
    connection.close();
    const after = rssKb(authorized.child.pid);
    const result = {
      clients: CLIENTS,
      concurrent: {
        open: summarize(concurrent.open),
        authorized: summarize(concurrent.authorized),
        views: summarize(concurrent.views),
        gateway: summarize(concurrent.gateway),
      },
      sequential: {
        open: summarize(sequential.open),
        authorized: summarize(sequential.authorized),
        views: summarize(sequential.views),
      },
      views: { made, rssBeforeKb: before, rssAfterKb: after, perViewKb: (after - before) / Math.max(1, made) },
    };
    const c = result.concurrent;
    const s = result.sequential;
    const f = (value, digits = 2) => value.toFixed(digits);
    const table = [
      `| run (${CLIENTS} keep-alive clients, ${ROUNDS}×${SECONDS} s each) | requests | req/s | p50 ms | p99 ms | server CPU µs/request | client CPU µs/request | errors | mismatches |`,
      '|---|---|---|---|---|---|---|---|---|',
      ...[
        ['open', c.open],
        ['static tokens (--http-tokens, 4 views)', c.views],
        ['authorized (bearer JWT, 4 views)', c.authorized],
        ['authorized, the 4 tokens taking turns on every connection (a gateway)', c.gateway],
      ].map(
        ([name, r]) =>
          `| ${name} | ${r.requests} | ${f(r.perSecond, 0)} | ${f(r.p50, 3)} | ${f(r.p99, 3)} | ${f(r.cpuUs, 0)} | ${f(r.clientUs, 0)} | ${r.errors} | ${r.mismatches} |`,
      ),
      '',
      `- throughput authorized / open: **${f(roundRatio('authorized', 'open'))}x** (median of ${ROUNDS} rounds, which ranged ${f(roundRatios('authorized', 'open')[0])}–${f(roundRatios('authorized', 'open').at(-1))}x; ${f(c.authorized.perSecond / c.open.perSecond)}x over all); authorized / static tokens with the same 4 views: **${f(roundRatio('authorized', 'views'))}x** (views alone: ${f(roundRatio('views', 'open'))}x of open); behind a gateway: **${f(roundRatio('gateway', 'open'))}x** of open`,
      `- server CPU per request, authorized / open: **${f(c.authorized.cpuUs / c.open.cpuUs)}x** (static tokens / open ${f(c.views.cpuUs / c.open.cpuUs)}x; behind a gateway / open ${f(c.gateway.cpuUs / c.open.cpuUs)}x): the cost whether or not the ${CLIENTS} clients, on the same ${os.availableParallelism()} cores, kept the server busy`,
      `- one client at a time: p50 open ${f(s.open.p50, 3)} ms, authorized ${f(s.authorized.p50, 3)} ms: static tokens ${f(s.views.p50, 3)} ms: verification adds **${f(s.authorized.p50 - s.open.p50, 3)} ms** at p50 over open, ${f(s.authorized.p50 - s.views.p50, 3)} ms over the same views (p99 ${f(s.open.p99, 3)} / ${f(s.authorized.p99, 3)} ms)`,
      `- memory per view: ${made} more views, RSS ${f(before / 1024, 1)} → ${f(after / 1024, 1)} MB: **${f(result.views.perViewKb, 1)} KB per view**`,
    ].join('\n');
    process.stdout.write(`${table}\n`);
    if (flags.write) {
      const load = os
        .loadavg()
        .map((n) => n.toFixed(2))
        .join(' ');
      writeFigureBlock(
        path.join(REPO, 'BENCHMARKS.md'),
        FIGURE_BLOCKS.auth,
        `Run ${new Date().toISOString()} on ${os.cpus()[0]?.model ?? 'unknown CPU'} (${os.availableParallelism()} cores), Node ${process.version}, load average ${load}: \`node bench/load-auth.mjs --clients ${CLIENTS} --seconds ${SECONDS} --rounds ${ROUNDS} --sequential ${SEQUENTIAL}\`\n\n${table}`,
      );
    }
    if (flags.json !== undefined) writeFileSync(flags.json, `${JSON.stringify(result, null, 2)}\n`);
    const bad =
      c.open.errors +
      c.open.mismatches +
      c.authorized.errors +
      c.authorized.mismatches +
      c.views.errors +
      c.views.mismatches +
      c.gateway.errors +
      c.gateway.mismatches +
      s.authorized.errors;
    process.exitCode = bad === 0 ? 0 : 1;
  } finally {
    for (const { child } of servers) child.kill('SIGTERM');
    await provider.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
