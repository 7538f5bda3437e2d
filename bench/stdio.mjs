// A minimal JSON-RPC peer over a child's stdio, for the benchmarks: newline-delimited messages, bounded waits, and
// children that are always reaped (see `killAll`). No SDK client, so the timings hold the server's work and the pipe,
// not a client library's validation.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** Every child still running, so that a failing benchmark can end them (by pid) before it exits. */
const live = new Set();

/** Ends every child started through this module that is still running (SIGKILL, by pid). */
export function killAll() {
  for (const child of live) {
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
  live.clear();
}

/** Spawns `node args…` with pipes and registers it for {@link killAll}. */
export function spawnNode(args, { node = process.execPath, ...options } = {}) {
  const child = spawn(node, args, { stdio: ['pipe', 'pipe', 'pipe'], ...options });
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}

/** Resolves with `promise`, or rejects after `ms` with `what` in the message. */
export function within(ms, what, promise) {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/**
 * Calls `onLine(buffer)` for every `\n`-terminated line of `stream`, empty ones included; scans only new bytes for
 * the newline.
 */
export function readLines(stream, onLine) {
  let parts = [];
  stream.on('data', (chunk) => {
    let start = 0;
    for (let newline = chunk.indexOf(10); newline !== -1; newline = chunk.indexOf(10, start)) {
      parts.push(chunk.subarray(start, newline));
      const line = parts.length === 1 ? parts[0] : Buffer.concat(parts);
      parts = [];
      start = newline + 1;
      onLine(line);
    }
    if (start < chunk.length) parts.push(chunk.subarray(start));
  });
}

/** Peak resident set (VmHWM, kB) of a live process, or NaN. */
export function peakRssKb(pid) {
  try {
    const match = /^VmHWM:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match === null ? Number.NaN : Number(match[1]);
  } catch {
    return Number.NaN;
  }
}

/**
 * A JSON-RPC peer on a spawned Node process.
 * - `request(method, params, timeoutMs)` → result (rejects on an error answer or a timeout);
 * - `onNotification(method, handler)`; `stderrLines` holds the child's stderr (pino JSON lines for the server);
 * - `close(timeoutMs)` ends stdin and waits for the exit, then kills.
 */
export class RpcChild {
  #pending = new Map();
  #handlers = new Map();
  #nextId = 1;
  #exited;
  stderrLines = [];
  /** When each stderr line arrived (performance.now()). */
  stderrAt = [];
  #stderrWaiters = new Set();

  constructor(args, { env, node } = {}) {
    this.startedAt = performance.now();
    this.child = spawnNode(args, { ...(env === undefined ? {} : { env }), ...(node === undefined ? {} : { node }) });
    this.pid = this.child.pid;
    this.#exited = new Promise((resolve) => this.child.once('exit', (code, signal) => resolve({ code, signal })));
    this.child.stdin.on('error', () => undefined); // EPIPE once the child is gone: the pending requests fail instead
    this.#exited.then(({ code, signal }) => {
      for (const { reject } of this.#pending.values())
        reject(new Error(`server exited (${code ?? signal}) with a request pending\n${this.stderrTail()}`));
      this.#pending.clear();
    });
    readLines(this.child.stdout, (line) => {
      if (line.length > 0) this.#onMessage(line);
    });
    readLines(this.child.stderr, (line) => {
      if (line.length === 0) return;
      const text = line.toString('utf8');
      this.stderrLines.push(text);
      this.stderrAt.push(performance.now());
      for (const waiter of this.#stderrWaiters) waiter(text);
    });
  }

  /** The last lines of the child's stderr, for error messages. */
  stderrTail(lines = 15) {
    return this.stderrLines.slice(-lines).join('\n');
  }

  #onMessage(line) {
    let message;
    try {
      message = JSON.parse(line.toString('utf8'));
    } catch {
      throw new Error(`not JSON-RPC on stdout: ${line.toString('utf8').slice(0, 200)}`);
    }
    if (message.id !== undefined && message.method === undefined) {
      const pending = this.#pending.get(message.id);
      if (pending === undefined) return;
      this.#pending.delete(message.id);
      if (message.error) pending.reject(new Error(`${pending.method}: ${JSON.stringify(message.error)}`));
      else pending.resolve(message.result);
    } else if (message.method !== undefined) {
      this.#handlers.get(message.method)?.(message.params, performance.now());
    }
  }

  send(message) {
    this.child.stdin.write(`${JSON.stringify(message)}\n`);
  }

  request(method, params = {}, timeoutMs = 60_000) {
    const id = this.#nextId++;
    const answered = new Promise((resolve, reject) => this.#pending.set(id, { resolve, reject, method }));
    this.send({ jsonrpc: '2.0', id, method, params });
    return within(timeoutMs, `${method} (pid ${this.pid})\n${this.stderrTail()}`, answered);
  }

  notify(method, params = {}) {
    this.send({ jsonrpc: '2.0', method, params });
  }

  onNotification(method, handler) {
    this.#handlers.set(method, handler);
  }

  /** Time from spawn to the arrival of stderr line `line` (one of {@link stderrLines}), ms. */
  sinceSpawn(line) {
    return this.stderrAt[this.stderrLines.indexOf(line)] - this.startedAt;
  }

  /** Resolves with the first stderr line (already seen or to come) for which `predicate` holds. */
  waitForStderr(predicate, timeoutMs, what) {
    const seen = this.stderrLines.find(predicate);
    if (seen !== undefined) return Promise.resolve(seen);
    let waiter;
    const found = new Promise((resolve) => {
      waiter = (line) => {
        if (predicate(line)) resolve(line);
      };
      this.#stderrWaiters.add(waiter);
    });
    return within(timeoutMs, `${what}\n${this.stderrTail()}`, found).finally(() => this.#stderrWaiters.delete(waiter));
  }

  /** `initialize` + `notifications/initialized`; resolves with the time from spawn to the answer (ms). */
  async initialize(timeoutMs = 60_000) {
    await this.request(
      'initialize',
      { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'skills-serve-bench', version: '1' } },
      timeoutMs,
    );
    const elapsed = performance.now() - this.startedAt;
    this.notify('notifications/initialized');
    return elapsed;
  }

  /** Every page of `skills/list`; resolves with the skills listed. */
  async listAll(timeoutMs = 120_000) {
    const skills = [];
    let cursor;
    do {
      const result = await this.request('skills/list', cursor === undefined ? {} : { cursor }, timeoutMs);
      skills.push(...result.skills);
      cursor = result.nextCursor;
    } while (cursor);
    return skills;
  }

  /** Ends stdin and waits for the exit (bounded), then SIGKILLs. Resolves with the exit code or signal. */
  async close(timeoutMs = 10_000) {
    this.child.stdin.end();
    try {
      return await within(timeoutMs, `exit of pid ${this.pid}`, this.#exited);
    } catch {
      this.child.kill('SIGKILL');
      return this.#exited;
    }
  }
}

/** Time (ms) from spawning a bare `node -e 0` to its exit. */
export function bareNodeStart(timeoutMs = 30_000, node = process.execPath) {
  const started = performance.now();
  const child = spawnNode(['-e', '0'], { stdio: 'ignore', node });
  return within(
    timeoutMs,
    'bare node -e 0',
    new Promise((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', () => resolve(performance.now() - started));
    }),
  );
}

/**
 * The host-side event-loop probe: from `startAt` on, sends `ping` to `server` every `intervalMs` (without waiting for
 * the previous answer, so a ping is waiting whenever the server's loop is blocked) and records each round trip.
 * `stop()` ends the probe and resolves with `{ rtts: number[], sentAt: number[], sent: number }` (round trips and send
 * times, ms, in answer order; send times are `performance.now()`) once every ping sent was answered.
 * A ping is answered only when the server's event loop runs, so the longest round trip bounds the longest block from
 * below (to within `intervalMs`), seen from the host, pipe and scheduling included.
 */
export function startPingProbe(server, intervalMs = 5) {
  const rtts = [];
  const sentAt = [];
  const inFlight = new Set();
  let sent = 0;
  const tick = () => {
    const at = performance.now();
    sent++;
    const answered = server.request('ping', {}, 120_000).then(
      () => {
        rtts.push(performance.now() - at);
        sentAt.push(at);
      },
      () => undefined,
    );
    inFlight.add(answered);
    answered.finally(() => inFlight.delete(answered));
  };
  const timer = setInterval(tick, intervalMs);
  tick();
  return {
    async stop() {
      clearInterval(timer);
      await Promise.all([...inFlight]);
      return { rtts, sentAt, sent };
    },
  };
}
