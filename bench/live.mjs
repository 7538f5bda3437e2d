// Write → `notifications/resources/updated` latency on a watched tree (the default mode): the logic of
// bench/live-latency.mjs (subscribe, write, wait for the update; EDITS edits spread over the tree), over raw JSON-RPC
// on the built CLI, on the bench's own trees. The server's own rebuild time is the `ms` of its `index-updated` log
// line. Each edit starts once the previous one's rebuilds are over (no `index-updated` line for QUIET_MS), so no edit
// is measured while another rebuild is still running.
import { writeFileSync } from 'node:fs';
import path from 'node:path';

import { peakRssKb, within } from './stdio.mjs';

export const EDITS = 20;
/** An edit is over when no `index-updated` line came for this long after its notification (ms). */
const QUIET_MS = 150;

function logOf(line) {
  try {
    return JSON.parse(line);
  } catch {
    return {};
  }
}
const isUpdate = (line) => logOf(line).event === 'index-updated';

/**
 * @param {import('./stdio.mjs').RpcChild} server a watching server over the tree, initialized, its first list done
 * @param {string} root the tree (bench-tree layout: group-NN/skill-NNNNN/references/topic-1.md)
 * @param {number} skills how many skills it holds
 * @param {number} edits how many edits
 * @returns {{ latencies: number[], rebuildMs: number[], extraRebuilds: number, hwmKb: number }} write → notification
 *   and server-side rebuild times (ms), rebuilds beyond one per edit, peak RSS after the edits (kB)
 */
export async function measureLiveLatency(server, root, skills, edits = EDITS) {
  const updated = new Map();
  server.onNotification('notifications/resources/updated', (params, at) => updated.get(params.uri)?.(at));
  const updates = () => server.stderrLines.filter(isUpdate);
  const latencies = [];
  const rebuildMs = [];
  let extraRebuilds = 0;
  for (let edit = 0; edit < edits; edit++) {
    const index = Math.floor((edit * skills) / edits) + 1;
    const rel = `group-${String(index % 50).padStart(2, '0')}/skill-${String(index).padStart(5, '0')}/references/topic-1.md`;
    const uri = `skill://${rel}`;
    await server.request('resources/subscribe', { uri });
    const before = updates().length;
    const received = new Promise((resolve) => updated.set(uri, resolve));
    const started = performance.now();
    writeFileSync(
      path.join(root, ...rel.split('/')),
      `# Edited ${edit} at ${started}\n${'Reference text line.\n'.repeat(10 + edit)}`,
    );
    const at = await within(15_000, `notifications/resources/updated for ${uri}\n${server.stderrTail()}`, received);
    updated.delete(uri);
    latencies.push(at - started);
    await server.waitForStderr(() => updates().length > before, 5_000, 'index-updated log');
    rebuildMs.push(Number(logOf(updates()[before]).ms));
    // Wait for quiet: a write can reach the watcher as more than one batch.
    for (let seen = updates().length; ;) {
      await new Promise((resolve) => setTimeout(resolve, QUIET_MS));
      if (updates().length === seen) break;
      seen = updates().length;
    }
    extraRebuilds += updates().length - before - 1;
    await server.request('resources/unsubscribe', { uri });
  }
  return { latencies, rebuildMs, extraRebuilds, hwmKb: peakRssKb(server.pid) };
}
