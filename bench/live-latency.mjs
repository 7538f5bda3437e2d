#!/usr/bin/env node
// Live-update latency: time from a file write to the `notifications/resources/updated` a subscribed host receives,
// on a small and a large tree, median of EDITS edits each. The ratio large/small shows whether one change costs
// O(changed) (ratio near 1) or O(tree). Run after `npm run build`: `node bench/live-latency.mjs [small] [large]`.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const BIN = fileURLToPath(new URL('../bin/skills-serve.js', import.meta.url));
const EDITS = 20;
const FILES_PER_SKILL = 5;
const sizes = process.argv
  .slice(2)
  .map(Number)
  .filter((n) => n > 0);
const [SMALL, LARGE] = sizes.length === 2 ? sizes : [10, 5000];

function makeTree(skills) {
  const root = mkdtempSync(path.join(os.tmpdir(), `skills-serve-bench-${skills}-`));
  for (let index = 0; index < skills; index++) {
    const name = `skill-${String(index).padStart(5, '0')}`;
    mkdirSync(path.join(root, name, 'references'), { recursive: true });
    writeFileSync(
      path.join(root, name, 'SKILL.md'),
      `---\nname: ${name}\ndescription: Benchmark skill ${index}.\n---\n# ${name}\n`,
    );
    for (let file = 1; file < FILES_PER_SKILL; file++) {
      writeFileSync(
        path.join(root, name, 'references', `ref-${file}.md`),
        `Reference ${file} of ${name}.\n`.repeat(30),
      );
    }
  }
  return root;
}

async function measure(skills) {
  const root = makeTree(skills);
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, '--log-level', process.env.BENCH_LOG_LEVEL ?? 'info', root],
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk) => (stderr += chunk));
  const client = new Client({ name: 'bench', version: '1.0.0' });
  const waiters = new Map();
  client.setNotificationHandler('notifications/resources/updated', (notification) => {
    waiters.get(notification.params.uri)?.(performance.now());
  });
  await client.connect(transport);
  const deadline = Date.now() + 120_000;
  while (!stderr.includes('watching roots for changes') || !stderr.includes('index built')) {
    if (Date.now() > deadline) throw new Error(`server not ready:\n${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const latencies = [];
  for (let edit = 0; edit < EDITS; edit++) {
    const name = `skill-${String(Math.floor((edit * skills) / EDITS)).padStart(5, '0')}`;
    const uri = `skill://${name}/references/ref-1.md`;
    await client.subscribeResource({ uri });
    const received = new Promise((resolve, reject) => {
      waiters.set(uri, resolve);
      setTimeout(() => reject(new Error(`no update for ${uri}\n${stderr}`)), 30_000);
    });
    const started = performance.now();
    writeFileSync(path.join(root, name, 'references', 'ref-1.md'), `Edited ${edit} at ${started}.\n`);
    latencies.push((await received) - started);
    waiters.delete(uri);
  }
  await client.close();
  rmSync(root, { recursive: true, force: true });
  latencies.sort((a, b) => a - b);
  const median = (latencies[EDITS / 2 - 1] + latencies[EDITS / 2]) / 2;
  return { skills, files: skills * FILES_PER_SKILL, median, min: latencies[0], max: latencies.at(-1) };
}

const rows = [];
for (const skills of [SMALL, LARGE]) rows.push(await measure(skills));
const format = (ms) => `${ms.toFixed(1)} ms`;
console.log(
  `write → notifications/resources/updated, median of ${EDITS} edits (Node ${process.version}, ${os.cpus().length} cores)`,
);
console.log('| skills | files | median | min | max |');
console.log('|---:|---:|---:|---:|---:|');
for (const row of rows)
  console.log(`| ${row.skills} | ${row.files} | ${format(row.median)} | ${format(row.min)} | ${format(row.max)} |`);
console.log(`ratio large/small (median): ${(rows[1].median / rows[0].median).toFixed(2)}`);
