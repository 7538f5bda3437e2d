#!/usr/bin/env node
// Startup latency over real stdio: time from spawning the server to the `initialize` answer, and to the end of the
// first complete `skills/list` walk (every page), median of RUNS runs, next to a bare `node -e ''` start measured in
// the same run as the baseline. Run after `npm run build`: `node bench/startup.mjs [root] [runs]`.
import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../bin/skills-serve.js', import.meta.url));
const root = path.resolve(process.argv[2] ?? fileURLToPath(new URL('../sample-skills', import.meta.url)));
const RUNS = Number(process.argv[3] ?? 5);

function once(args) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'ignore'] });
    const times = {};
    let buffer = '';
    let skills = 0;
    let nextId = 2;
    const send = (message) => child.stdin.write(`${JSON.stringify(message)}\n`);
    child.stdout.on('data', (chunk) => {
      buffer += chunk;
      let newline;
      while ((newline = buffer.indexOf('\n')) !== -1) {
        const message = JSON.parse(buffer.slice(0, newline));
        buffer = buffer.slice(newline + 1);
        if (message.id === 1) {
          times.initialize = performance.now() - started;
          send({ jsonrpc: '2.0', method: 'notifications/initialized' });
          send({ jsonrpc: '2.0', id: nextId++, method: 'skills/list', params: {} });
        } else if (message.id >= 2) {
          if (message.error) return reject(new Error(JSON.stringify(message.error)));
          skills += message.result.skills.length;
          if (message.result.nextCursor) {
            send({
              jsonrpc: '2.0',
              id: nextId++,
              method: 'skills/list',
              params: { cursor: message.result.nextCursor },
            });
          } else {
            times.list = performance.now() - started;
            times.skills = skills;
            child.stdin.end();
          }
        }
      }
    });
    child.on('exit', () => resolve(times));
    send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
    });
  });
}

function bareNode() {
  return new Promise((resolve) => {
    const started = performance.now();
    spawn(process.execPath, ['-e', ''], { stdio: 'ignore' }).on('exit', () => resolve(performance.now() - started));
  });
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

const runs = [];
const bare = [];
for (let run = 0; run < RUNS; run++) {
  bare.push(await bareNode());
  runs.push(await once([BIN, '--no-watch', root]));
}
console.log(
  `startup over stdio on ${root} (${runs[0].skills} skills), median of ${RUNS} runs, Node ${process.version}, ${os.cpus().length} cores`,
);
console.log('| measure | median | runs |');
console.log('|---|---:|---|');
console.log(
  `| bare \`node -e ''\` start (baseline) | ${median(bare).toFixed(1)} ms | ${bare.map((t) => t.toFixed(0)).join(', ')} |`,
);
console.log(
  `| spawn → initialize answer | ${median(runs.map((r) => r.initialize)).toFixed(1)} ms | ${runs.map((r) => r.initialize.toFixed(0)).join(', ')} |`,
);
console.log(
  `| spawn → first complete skills/list | ${median(runs.map((r) => r.list)).toFixed(1)} ms | ${runs.map((r) => r.list.toFixed(0)).join(', ')} |`,
);
