// HTTP throughput of `npm run bench`: 32 keep-alive clients (one node:http Agent, keepAlive, maxSockets 32) send a
// fixed mix of `skills/list` (first page), `skills/get` and `resources/read` of small files, in the 2025-11-25
// stateless form (POST /mcp, no session), to `skills-serve --http 127.0.0.1:0 <root>`, and then to the floor
// (bench/http-floor.mjs): a bare node:http server replaying the real server's recorded answers by request body. Server
// and floor run in alternating rounds, so load from elsewhere on the machine hits both alike.
import { writeFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import path from 'node:path';

import { peakRssKb, spawnNode, within } from './stdio.mjs';

/** The request headers of a 2025-11-25 client without a session (what the server expects, checked with curl). */
export const REQUEST_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-11-25',
};
/** The mix, one slot per request in this order, repeated: 2 lists, 3 gets, 5 reads in every 10 requests. */
const PATTERN = ['list', 'get', 'read', 'get', 'read', 'read', 'get', 'read', 'list', 'read'];
/** Distinct skills (`skills/get`) and small files (`resources/read`) the mix spreads over. */
const POOL = 200;
/** A "small file" for the read mix (bytes). */
const SMALL_FILE_MAX = 16 * 1024;

const METHOD_OF = { list: 'skills/list', get: 'skills/get', read: 'resources/read' };

/** A child whose stderr (and stdout) lines are kept, for servers that speak HTTP. */
class LoggedChild {
  stderrLines = [];
  stdoutLines = [];
  #waiters = new Set();

  constructor(args) {
    this.child = spawnNode(args);
    this.pid = this.child.pid;
    this.exited = new Promise((resolve) => this.child.once('exit', (code, signal) => resolve({ code, signal })));
    this.child.stdin.end();
    for (const [stream, lines] of [
      [this.child.stderr, this.stderrLines],
      [this.child.stdout, this.stdoutLines],
    ]) {
      let rest = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk) => {
        const parts = (rest + chunk).split('\n');
        rest = parts.pop();
        for (const line of parts) {
          lines.push(line);
          for (const waiter of this.#waiters) waiter();
        }
      });
    }
  }

  /** Resolves with the first line of `lines` (already seen or to come) for which `predicate` holds. */
  waitFor(lines, predicate, timeoutMs, what) {
    let waiter;
    const found = new Promise((resolve) => {
      waiter = () => {
        const line = lines.find(predicate);
        if (line !== undefined) resolve(line);
      };
      this.#waiters.add(waiter);
      waiter();
    });
    return within(timeoutMs, `${what}\n${this.stderrLines.slice(-10).join('\n')}`, found).finally(() =>
      this.#waiters.delete(waiter),
    );
  }

  /** SIGTERM, then SIGKILL if it has not exited within 10 s. */
  async stop() {
    this.child.kill('SIGTERM');
    return within(10_000, `exit of pid ${this.pid}`, this.exited).catch(() => {
      this.child.kill('SIGKILL');
      return this.exited;
    });
  }
}

const jsonOf = (line) => {
  try {
    return JSON.parse(line);
  } catch {
    return {};
  }
};

/** One POST /mcp; resolves with the status, raw headers, body bytes. */
function post(agent, port, body, timeoutMs = 30_000) {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { agent, host: '127.0.0.1', port, path: '/mcp', method: 'POST', headers: REQUEST_HEADERS },
      (res) => {
        const chunks = [];
        res.on('data', (chunk) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () =>
          resolve({
            status: res.statusCode,
            rawHeaders: res.rawHeaders,
            body: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks),
          }),
        );
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`request timed out: ${body.slice(0, 120)}`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** The JSON-RPC message in an answer body (SSE `data:` line or plain JSON). */
function messageOf(body) {
  const text = body.toString('utf8');
  const data =
    text.startsWith('event:') || text.startsWith('data:')
      ? text
          .split('\n')
          .find((line) => line.startsWith('data: '))
          ?.slice(6)
      : text;
  return JSON.parse(data ?? '');
}

const rpc = (method, params) => JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });

/**
 * Sends `sequence` (items `{ request, expected, kind }`) from `clients` concurrent loops for `ms`, over `agent`.
 *
 * @returns requests answered, elapsed ms, per-request latencies (ms), errors (failures and non-200) and mismatches
 *   (a 200 whose body differs from the recorded one).
 */
async function load(agent, port, sequence, clients, ms) {
  const latencies = [];
  const byKind = { list: [], get: [], read: [] };
  let errors = 0;
  let mismatches = 0;
  let firstError;
  const started = performance.now();
  const deadline = started + ms;
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      for (let slot = client * 37; performance.now() < deadline; slot++) {
        const item = sequence[slot % sequence.length];
        const at = performance.now();
        try {
          const answer = await post(agent, port, item.request);
          const took = performance.now() - at;
          latencies.push(took);
          byKind[item.kind].push(took);
          if (answer.status !== 200) {
            errors++;
            firstError ??= `HTTP ${answer.status}: ${answer.body.toString('utf8').slice(0, 200)}`;
          } else if (!answer.body.equals(item.expected)) mismatches++;
        } catch (error) {
          errors++;
          firstError ??= error.message;
        }
      }
    }),
  );
  return {
    requests: latencies.length,
    ms: performance.now() - started,
    latencies,
    byKind,
    errors,
    mismatches,
    firstError,
  };
}

/**
 * The HTTP row: server vs floor, each for `rounds` × `seconds` (alternating) after `warmupSeconds` each.
 *
 * @param {{ bin: string, root: string, floorScript: string, work: string, clients: number, rounds: number,
 *   seconds: number, warmupSeconds: number, log: (text: string) => void }} options
 */
export async function measureHttp({ bin, root, floorScript, work, clients, rounds, seconds, warmupSeconds, log }) {
  const server = new LoggedChild([bin, '--http', '127.0.0.1:0', root]);
  let floor;
  const agents = [];
  try {
    const serving = jsonOf(
      await server.waitFor(
        server.stderrLines,
        (line) => jsonOf(line).event === 'serving',
        60_000,
        'HTTP server: serving log line',
      ),
    );
    const port = Number(serving.port);
    if (!Number.isInteger(port) || port <= 0)
      throw new Error(`no port in the serving log line: ${JSON.stringify(serving)}`);
    await server.waitFor(
      server.stderrLines,
      (line) => jsonOf(line).event === 'index-built',
      300_000,
      'HTTP server: index-built log line',
    );

    // What the mix asks for, from the server's own listing (untimed).
    const setup = new Agent({ keepAlive: true, maxSockets: 1 });
    agents.push(setup);
    const skills = [];
    let cursor;
    do {
      const answer = await post(setup, port, rpc('skills/list', cursor === undefined ? {} : { cursor }));
      const message = messageOf(answer.body);
      if (answer.status !== 200 || message.result === undefined)
        throw new Error(`skills/list over HTTP: ${answer.status} ${answer.body.toString('utf8').slice(0, 300)}`);
      skills.push(...message.result.skills);
      cursor = message.result.nextCursor;
    } while (cursor);
    const step = Math.max(1, Math.floor(skills.length / POOL));
    const picked = skills.filter((_, index) => index % step === 0).slice(0, POOL);
    const smallFiles = picked.map((skill, index) => {
      const small = skill.resources.filter((resource) => resource.size <= SMALL_FILE_MAX);
      return small[index % small.length].uri;
    });
    const requests = {
      list: [rpc('skills/list', {})],
      get: picked.map((skill) => rpc('skills/get', { uri: skill.uri })),
      read: smallFiles.map((uri) => rpc('resources/read', { uri })),
    };

    // Record the server's answer to every distinct request.
    const recordings = [];
    const expected = new Map();
    for (const [kind, bodies] of Object.entries(requests)) {
      for (const request of bodies) {
        const answer = await post(setup, port, request);
        const message = messageOf(answer.body);
        if (answer.status !== 200 || message.result === undefined)
          throw new Error(
            `${METHOD_OF[kind]} over HTTP: ${answer.status} ${answer.body.toString('utf8').slice(0, 300)}`,
          );
        const headers = [];
        for (let index = 0; index < answer.rawHeaders.length; index += 2) {
          const name = answer.rawHeaders[index];
          // Date and the transfer encoding are written by node:http itself, on both servers.
          if (!/^(date|transfer-encoding)$/iu.test(name)) headers.push([name, answer.rawHeaders[index + 1]]);
        }
        recordings.push({ request, status: answer.status, headers, body: answer.body.toString('base64') });
        expected.set(request, { body: answer.body, kind });
      }
    }
    const recordingsFile = path.join(work, 'http-recordings.json');
    writeFileSync(recordingsFile, JSON.stringify(recordings));
    const sizes = Object.fromEntries(
      Object.keys(requests).map((kind) => {
        const bodies = recordings
          .filter((item) => expected.get(item.request).kind === kind)
          .map((item) => Buffer.from(item.body, 'base64').length);
        return [kind, bodies.reduce((a, b) => a + b, 0) / bodies.length];
      }),
    );
    const headerSample = recordings[0].headers;

    const counters = { list: 0, get: 0, read: 0 };
    const sequence = [];
    for (let slot = 0; slot < PATTERN.length * POOL; slot++) {
      const kind = PATTERN[slot % PATTERN.length];
      const bodies = requests[kind];
      const request = bodies[counters[kind]++ % bodies.length];
      sequence.push({ request, kind, expected: expected.get(request).body });
    }

    floor = new LoggedChild([floorScript, recordingsFile]);
    const floorPort = jsonOf(
      await floor.waitFor(floor.stdoutLines, (line) => jsonOf(line).port !== undefined, 30_000, 'HTTP floor: port'),
    ).port;
    const targets = {
      server: { port, agent: new Agent({ keepAlive: true, maxSockets: clients }) },
      floor: { port: floorPort, agent: new Agent({ keepAlive: true, maxSockets: clients }) },
    };
    agents.push(targets.server.agent, targets.floor.agent);
    // The floor must answer exactly what the server answered.
    for (const item of sequence.slice(0, PATTERN.length)) {
      const answer = await post(targets.floor.agent, floorPort, item.request);
      if (answer.status !== 200 || !answer.body.equals(item.expected))
        throw new Error(`the HTTP floor did not replay ${item.request.slice(0, 120)}`);
    }
    for (const target of Object.values(targets))
      await load(target.agent, target.port, sequence, clients, warmupSeconds * 1000);
    const runs = { server: [], floor: [] };
    for (let round = 0; round < rounds; round++) {
      for (const [name, target] of Object.entries(targets)) {
        log(`HTTP round ${round + 1}/${rounds}: ${name}, ${seconds} s`);
        runs[name].push(await load(target.agent, target.port, sequence, clients, seconds * 1000));
      }
    }
    const merge = (list) => ({
      requests: list.reduce((sum, run) => sum + run.requests, 0),
      ms: list.reduce((sum, run) => sum + run.ms, 0),
      latencies: list.flatMap((run) => run.latencies),
      byKind: Object.fromEntries(Object.keys(METHOD_OF).map((kind) => [kind, list.flatMap((run) => run.byKind[kind])])),
      errors: list.reduce((sum, run) => sum + run.errors, 0),
      mismatches: list.reduce((sum, run) => sum + run.mismatches, 0),
      firstError: list.find((run) => run.firstError !== undefined)?.firstError,
      perRound: list.map((run) => run.requests / (run.ms / 1000)),
    });
    const quantiles = (values) => {
      const sorted = values.sort((a, b) => a - b);
      const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
      return { count: sorted.length, p50: at(0.5), p99: at(0.99) };
    };
    const summary = (run) => {
      const { p50, p99 } = quantiles(run.latencies);
      const perKind = Object.fromEntries(Object.entries(run.byKind).map(([kind, values]) => [kind, quantiles(values)]));
      return {
        requests: run.requests,
        seconds: run.ms / 1000,
        rps: run.requests / (run.ms / 1000),
        p50,
        p99,
        perKind,
        errors: run.errors,
        mismatches: run.mismatches,
        firstError: run.firstError,
        perRound: run.perRound,
      };
    };
    return {
      clients,
      rounds,
      seconds,
      skills: skills.length,
      distinct: recordings.length,
      meanBytes: sizes,
      headers: headerSample,
      server: summary(merge(runs.server)),
      floor: summary(merge(runs.floor)),
      serverHwmKb: peakRssKb(server.pid),
    };
  } finally {
    for (const agent of agents) agent.destroy();
    await Promise.all([server.stop(), floor?.stop()]);
  }
}
