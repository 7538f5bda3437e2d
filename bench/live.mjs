// Write → `notifications/resources/updated` latency on a watched tree: the logic of bench/live-latency.mjs (subscribe,
// write, wait for the update; median of EDITS edits spread over the tree), over raw JSON-RPC on the built CLI, on the
// bench's own trees. Each edit also waits for the watcher's follow-up re-check rebuild (RECHECK_MS after the batch)
// to be done, so no edit is measured while the previous one's rebuild is still running. The server's own rebuild
// time is read from its `index updated` log line. Before the edits, it times the watching server's start (the default
// mode; the startup benchmark uses --no-watch).
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { peakRssKb, RpcChild, within } from './stdio.mjs';

export const EDITS = 20;

function logOf(line) {
  try {
    return JSON.parse(line);
  } catch {
    return {};
  }
}
const isUpdate = (line) => typeof logOf(line).msg === 'string' && logOf(line).msg.startsWith('index updated');

/**
 * @param {string} bin path of bin/skills-serve.js
 * @param {string} root the tree (bench-tree layout: group-NN/skill-NNNNN/references/topic-1.md)
 * @param {number} skills how many skills it holds
 * @returns {{ latencies: number[], rebuildMs: number[], hwmKb: number, startup: object }} latencies and rebuild times (ms),
 *   peak RSS after the edits (kB), and the watching server's start: spawn → first complete list, watcher ready and
 *   index built (ms), peak RSS after that list (kB)
 */
export async function measureLiveLatency(bin, root, skills) {
  const server = new RpcChild([bin, '--log-level', 'info', root]);
  try {
    const updated = new Map();
    server.onNotification('notifications/resources/updated', (params, at) => updated.get(params.uri)?.(at));
    await server.initialize();
    // The default mode (watching on): the first complete list waits for the watcher's initial scan, then the build.
    const listed = await server.listAll(300_000);
    const startup = {
      listMs: performance.now() - server.startedAt,
      skills: listed.length,
      hwmAfterListKb: peakRssKb(server.pid),
      watcherReadyMs: server.sinceSpawn(await server.waitForStderr((line) => logOf(line).msg?.startsWith('watching roots for changes'), 180_000, 'watcher ready')),
      indexBuiltMs: server.sinceSpawn(await server.waitForStderr((line) => logOf(line).msg?.startsWith('index built'), 180_000, 'index built')),
    };
    const latencies = [];
    const rebuildMs = [];
    for (let edit = 0; edit < EDITS; edit++) {
      const index = Math.floor((edit * skills) / EDITS);
      const rel = `group-${String(index % 50).padStart(2, '0')}/skill-${String(index).padStart(5, '0')}/references/topic-1.md`;
      const uri = `skill://${rel}`;
      await server.request('resources/subscribe', { uri });
      const before = server.stderrLines.filter(isUpdate).length;
      const received = new Promise((resolve) => updated.set(uri, resolve));
      const started = performance.now();
      writeFileSync(path.join(root, ...rel.split('/')), `# Edited ${edit} at ${started}\n${'Reference text line.\n'.repeat(10 + edit)}`);
      const at = await within(15_000, `notifications/resources/updated for ${uri}\n${server.stderrTail()}`, received);
      updated.delete(uri);
      latencies.push(at - started);
      // The rebuild that applied the write, then the re-check rebuild that follows it (bounded: it may find nothing).
      const updates = () => server.stderrLines.filter(isUpdate);
      await server.waitForStderr(() => updates().length > before, 5_000, 'index updated log');
      rebuildMs.push(Number(logOf(updates()[before]).ms));
      await server.waitForStderr(() => updates().length >= before + 2, 2_000, 're-check rebuild').catch(() => undefined);
    }
    const hwmKb = peakRssKb(server.pid);
    return { latencies, rebuildMs, hwmKb, startup };
  } finally {
    await server.close();
  }
}
