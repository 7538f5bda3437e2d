// One start of the stdio server, as a host sees it: spawn → `initialize` answer → every page of the first
// `skills/list` (sent right after `initialize`; the server answers it once its first index build is served), then the
// peak RSS (VmHWM) once every directory is watched (the `watching` log line; at once with --no-watch). Optionally the
// host-side event-loop probe runs during the start (see startPingProbe).
import { peakRssKb, RpcChild, startPingProbe } from './stdio.mjs';

function logOf(line) {
  try {
    return JSON.parse(line);
  } catch {
    return {};
  }
}

/** The probe's round trips, and when (since spawn) the longest one was sent. */
function probeSummary(pings, fromMs, startedAt) {
  let worst = -1;
  for (let index = 0; index < pings.rtts.length; index++)
    if (worst === -1 || pings.rtts[index] > pings.rtts[worst]) worst = index;
  return {
    fromMs,
    sent: pings.sent,
    rtts: pings.rtts,
    worstSentAtMs: worst === -1 ? Number.NaN : pings.sentAt[worst] - startedAt,
  };
}

/**
 * @param {string} bin path of bin/skills-serve.js
 * @param {string} root the tree
 * @param {string[]} flags CLI flags before the root (`[]`: the default, watching mode)
 * @param {{ probe?: boolean, keep?: boolean }} options `probe`: ping every 5 ms from the `initialize` answer until
 *   the list is complete; `keep`: return the server still running
 * @returns {Promise<object>} initMs, servingAt (spawn → the `serving` log line), listMs (spawn → last page), skills,
 *   hwmKb, the `index-built` log line's `ms` and arrival (since spawn), the watched directory count (`watching` log
 *   line), the probe's round trips; and `server` when kept (the caller closes it)
 */
export async function measureStart(bin, root, flags, { probe = false, keep = false } = {}) {
  // info: the timing lines read below (a host's stdio default is warn, which writes none).
  const server = new RpcChild([bin, '--log-level', 'info', ...flags, root]);
  try {
    const initMs = await server.initialize(120_000);
    // Before `initialize` is answered the SDK holds every other message, so a ping sent earlier waits for the answer,
    // not for a blocked loop; and a recorded answer goes out before the bundle loads (docs/ARCHITECTURE.md, "Answering
    // ahead"), so a ping sent before the `serving` line waits for the code to load. The probe starts at that line,
    // and runs until the list is complete.
    if (probe) await server.waitForStderr((line) => logOf(line).event === 'serving', 60_000, 'serving log line');
    const probing = probe ? startPingProbe(server, 5) : undefined;
    const probeFrom = performance.now() - server.startedAt;
    const listed = await server.listAll(600_000);
    const listMs = performance.now() - server.startedAt;
    const pings = probing === undefined ? undefined : await probing.stop();
    const builtLine = await server.waitForStderr(
      (line) => logOf(line).event === 'index-built',
      10_000,
      'index-built log line',
    );
    const watching = flags.includes('--no-watch')
      ? undefined
      : logOf(await server.waitForStderr((line) => logOf(line).event === 'watching', 10_000, 'watching log line'));
    // The peak of the whole start: the directory watches are set after the first answer (`watching` says when).
    const hwmKb = peakRssKb(server.pid);
    const servingLine = await server.waitForStderr(
      (line) => logOf(line).event === 'serving',
      10_000,
      'serving log line',
    );
    const result = {
      initMs,
      servingAt: server.sinceSpawn(servingLine),
      listMs,
      skills: listed.length,
      files: listed.reduce((sum, skill) => sum + skill.resources.length, 0),
      hwmKb,
      indexBuiltMs: Number(logOf(builtLine).ms),
      digestsStored: Number(logOf(builtLine).digestsStored ?? 0),
      digestsTrusted: Number(logOf(builtLine).digestsTrusted ?? 0),
      indexBuiltAt: server.sinceSpawn(builtLine),
      watchedDirs: watching?.directories,
      watchMode: watching?.mode,
      ...(probe ? { probe: probeSummary(pings, probeFrom, server.startedAt) } : {}),
    };
    if (keep) return { ...result, listed, server };
    await server.close();
    return result;
  } catch (error) {
    await server.close(2_000);
    throw error;
  }
}
