/**
 * Usage and audit over HTTP (docs/operations.md, "Metrics and access log"), with real HTTP requests on 127.0.0.1
 * against the built server on real directories and real git: a scripted session per view, then `/metrics` line by
 * line (per-skill `SKILL.md` reads by view, JSON-RPC errors by code, outcome `error` for an error answered with 200),
 * the access log's fields for every read, a removed skill's series dropped, and a git root's version and stale
 * gauges once its remote is gone.
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { sha256 } from '../helpers/disk.js';
import { createRemote } from '../helpers/git-repo.js';
import { eventsOf, type LogLine, waitForEvent } from '../helpers/logs.js';
import { type HttpServer, startHttpServer } from '../helpers/server.js';
import { makeTempDir, makeTree, removeTree, skillMd } from '../helpers/tree.js';
import { waitFor } from '../helpers/wait.js';

const OPS = 'ops-token-0123456789abcdef';
const TEAM = 'team-token-0123456789abcdef';

const ALPHA_MD = skillMd('alpha', 'Alpha, read by the team.');
const GUIDE = '# Guide\n\nHow alpha works.\n';
const BETA_MD = skillMd('beta', 'Beta, read by ops.');

let server: HttpServer | undefined;
const cleanup: string[] = [];
afterEach(async () => {
  await server?.stop();
  server = undefined;
  for (const dir of cleanup.splice(0)) await removeTree(dir);
});

/**
 * One 2025-11-25 JSON-RPC request over HTTP; the answer is the last `data:` message of the response (SSE) or its
 * JSON body.
 */
async function rpc(
  url: string,
  token: string | undefined,
  id: number,
  method: string,
  params: Record<string, unknown> = {},
): Promise<Record<string, unknown>> {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
  });
  const text = await response.text();
  const data = text.split('\n').filter((line) => line.startsWith('data: '));
  return JSON.parse(data.length > 0 ? (data.at(-1) as string).slice(6) : text) as Record<string, unknown>;
}

/** The `/metrics` lines of the given metric names, `# HELP`/`# TYPE` and histogram series left out. */
async function metricLines(base: string, names: readonly string[], token?: string): Promise<string[]> {
  const response = await fetch(`${base}/metrics`, {
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
  });
  expect(response.status).toBe(200);
  return (await response.text())
    .split('\n')
    .filter((line) => names.some((name) => line.startsWith(`${name}{`) || line.startsWith(`${name} `)));
}

/** An access log line without what varies from run to run. */
function logged(line: LogLine): Record<string, unknown> {
  const { level: _level, time: _time, pid: _pid, name: _name, ms: _ms, msg: _msg, ...rest } = line;
  return rest;
}

describe('usage over HTTP', () => {
  it('counts SKILL.md reads by skill and view, JSON-RPC errors by code, and logs every read with its digest', async () => {
    const root = await makeTree({
      'alpha/SKILL.md': ALPHA_MD,
      'alpha/references/guide.md': GUIDE,
      'beta/SKILL.md': BETA_MD,
    });
    const dir = await makeTempDir();
    cleanup.push(root, dir);
    const tokens = path.join(dir, 'tokens.json');
    await fsp.writeFile(
      tokens,
      JSON.stringify({
        tokens: [
          { name: 'ops', token: OPS, prefixes: ['*'] },
          { name: 'team-a', token: TEAM, prefixes: ['alpha'] },
        ],
      }),
    );
    server = await startHttpServer(['--http-tokens', tokens, root]);
    await waitForEvent(server.stderr, 'watching');
    const { url } = server;
    const base = `http://127.0.0.1:${server.port}`;

    // The team's session: initialize, list, the entry, SKILL.md, a resource, and a skill it may not see.
    const initialize = await rpc(url, TEAM, 1, 'initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'usage-e2e', version: '1' },
    });
    expect(initialize['result']).toBeDefined();
    const listed = (await rpc(url, TEAM, 2, 'skills/list'))['result'] as { skills: { uri: string }[] };
    expect(listed.skills.map((skill) => skill.uri)).toEqual(['skill://alpha/SKILL.md']);
    expect(await rpc(url, TEAM, 3, 'skills/get', { uri: 'skill://alpha/SKILL.md' })).toHaveProperty('result');
    expect(await rpc(url, TEAM, 4, 'resources/read', { uri: 'skill://alpha/SKILL.md' })).toHaveProperty('result');
    expect(await rpc(url, TEAM, 5, 'resources/read', { uri: 'skill://alpha/references/guide.md' })).toHaveProperty(
      'result',
    );
    expect((await rpc(url, TEAM, 6, 'skills/get', { uri: 'skill://beta/SKILL.md' }))['error']).toEqual({
      code: -32602,
      message: 'No skill is served at skill://beta/SKILL.md',
    });
    // Ops reads beta's SKILL.md twice, and asks for a method nobody serves.
    for (const id of [7, 8]) await rpc(url, OPS, id, 'resources/read', { uri: 'skill://beta/SKILL.md' });
    expect(((await rpc(url, OPS, 9, 'no/such-method'))['error'] as { code: number }).code).toBe(-32601);
    // A host without the Skills extension reads SKILL.md through the compat tool: a read like any other.
    const tool = await rpc(url, OPS, 10, 'tools/call', { name: 'read_skill', arguments: { name: 'beta' } });
    expect(JSON.stringify(tool['result'])).toContain('Beta, read by ops.');
    await waitFor(() => eventsOf(server?.stderr() ?? '', 'request').length === 10);

    const counted = [
      'skills_serve_http_requests_total',
      'skills_serve_jsonrpc_errors_total',
      'skills_serve_skill_reads_total',
      'skills_serve_skill_info',
    ];
    expect(await metricLines(base, counted, OPS)).toEqual([
      'skills_serve_http_requests_total{method="initialize",outcome="ok"} 1',
      'skills_serve_http_requests_total{method="skills/list",outcome="ok"} 1',
      'skills_serve_http_requests_total{method="skills/get",outcome="ok"} 1',
      'skills_serve_http_requests_total{method="resources/read",outcome="ok"} 4',
      'skills_serve_http_requests_total{method="skills/get",outcome="error"} 1',
      'skills_serve_http_requests_total{method="other",outcome="error"} 1',
      'skills_serve_http_requests_total{method="tools/call",outcome="ok"} 1',
      'skills_serve_jsonrpc_errors_total{method="skills/get",code="-32602"} 1',
      'skills_serve_jsonrpc_errors_total{method="other",code="-32601"} 1',
      'skills_serve_skill_reads_total{skill="alpha",view="team-a"} 1',
      'skills_serve_skill_reads_total{skill="beta",view="ops"} 3',
      'skills_serve_skill_info{skill="alpha"} 1',
      'skills_serve_skill_info{skill="beta"} 1',
    ]);
    // Skill paths are not for everyone: a scrape without a token, or with a token that sees part, gets no skill series.
    for (const token of [undefined, TEAM]) {
      const lines = await metricLines(base, counted, token);
      expect(lines.filter((line) => line.startsWith('skills_serve_skill'))).toEqual([]);
      expect(lines).toContain('skills_serve_jsonrpc_errors_total{method="skills/get",code="-32602"} 1');
    }
    // Process metrics, computed at the scrape.
    const processLines = await metricLines(base, [
      'process_cpu_seconds_total',
      'process_resident_memory_bytes',
      'process_open_fds',
      'nodejs_heap_size_total_bytes',
      'nodejs_heap_size_used_bytes',
      'nodejs_external_memory_bytes',
    ]);
    expect(processLines.map((line) => line.replace(/ [\d.e+]+$/u, ''))).toEqual([
      'process_cpu_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_heap_size_total_bytes',
      'nodejs_heap_size_used_bytes',
      'nodejs_external_memory_bytes',
      'process_open_fds',
    ]);
    for (const line of processLines) expect(Number(line.split(' ').at(-1))).toBeGreaterThan(0);

    // One access log line per request; reads carry what was served.
    const lines = eventsOf(server.stderr(), 'request').map(logged);
    const read = { event: 'request', outcome: 'ok', status: 200 };
    expect(lines).toEqual([
      { ...read, method: 'initialize', subject: 'team-a', view: 'team-a' },
      { ...read, method: 'skills/list', subject: 'team-a', view: 'team-a' },
      {
        ...read,
        method: 'skills/get',
        subject: 'team-a',
        view: 'team-a',
        uri: 'skill://alpha/SKILL.md',
        skill: 'skill://alpha/SKILL.md',
        digest: sha256(ALPHA_MD),
      },
      {
        ...read,
        method: 'resources/read',
        subject: 'team-a',
        view: 'team-a',
        uri: 'skill://alpha/SKILL.md',
        skill: 'skill://alpha/SKILL.md',
        digest: sha256(ALPHA_MD),
      },
      {
        ...read,
        method: 'resources/read',
        subject: 'team-a',
        view: 'team-a',
        uri: 'skill://alpha/references/guide.md',
        skill: 'skill://alpha/SKILL.md',
        digest: sha256(GUIDE),
      },
      { ...read, outcome: 'error', method: 'skills/get', subject: 'team-a', view: 'team-a', error: -32602 },
      ...[7, 8].map(() => ({
        ...read,
        method: 'resources/read',
        subject: 'ops',
        view: 'ops',
        uri: 'skill://beta/SKILL.md',
        skill: 'skill://beta/SKILL.md',
        digest: sha256(BETA_MD),
      })),
      { ...read, outcome: 'error', method: 'other', subject: 'ops', view: 'ops', error: -32601 },
      {
        ...read,
        method: 'tools/call',
        subject: 'ops',
        view: 'ops',
        uri: 'skill://beta/SKILL.md',
        skill: 'skill://beta/SKILL.md',
        digest: sha256(BETA_MD),
      },
    ]);

    // A skill no longer served takes its series with it.
    await removeTree(path.join(root, 'beta'));
    await waitForEvent(server.stderr, 'index-updated', { skills: 1 });
    expect(await metricLines(base, counted.slice(2), OPS)).toEqual([
      'skills_serve_skill_reads_total{skill="alpha",view="team-a"} 1',
      'skills_serve_skill_info{skill="alpha"} 1',
    ]);
  });

  it("gives a git root's commit, its age and whether it is stale; a read is logged with its commit", async () => {
    const remote = await createRemote();
    const commit = await remote.commit({ 'skills/alpha/SKILL.md': ALPHA_MD });
    const cache = await makeTempDir();
    cleanup.push(cache, remote.projectRoot, path.dirname(remote.work));
    const started = Date.now();
    server = await startHttpServer([`git+${remote.fileUrl}#main:skills`, '--cache-dir', cache, '--git-poll', '1000']);
    const base = `http://127.0.0.1:${server.port}`;
    const stderr = server.stderr;
    const rootMetrics = [
      'skills_serve_root_version_info',
      'skills_serve_root_stale',
      'skills_serve_root_version_age_seconds',
    ];
    const withoutAge = async (): Promise<string[]> =>
      (await metricLines(base, rootMetrics)).filter(
        (line) => !line.startsWith('skills_serve_root_version_age_seconds'),
      );
    expect(await withoutAge()).toEqual([
      `skills_serve_root_version_info{root="0",kind="git",version="${commit}"} 1`,
      'skills_serve_root_stale{root="0",kind="git"} 0',
    ]);
    const age = (await metricLines(base, rootMetrics)).find((line) =>
      line.startsWith('skills_serve_root_version_age_seconds{root="0",kind="git"} '),
    );
    expect(Number(age?.split(' ')[1])).toBeGreaterThanOrEqual(0);
    expect(Number(age?.split(' ')[1])).toBeLessThanOrEqual((Date.now() - started) / 1000);

    await rpc(server.url, undefined, 1, 'resources/read', { uri: 'skill://alpha/SKILL.md' });
    await waitFor(() => eventsOf(stderr(), 'request').length === 1);
    expect(logged(eventsOf(stderr(), 'request')[0] as LogLine)).toEqual({
      event: 'request',
      method: 'resources/read',
      outcome: 'ok',
      status: 200,
      view: '*',
      uri: 'skill://alpha/SKILL.md',
      skill: 'skill://alpha/SKILL.md',
      digest: sha256(ALPHA_MD),
      version: commit,
    });

    // The remote goes away: the next poll fails, and the cached commit is served as a fallback.
    await fsp.rm(remote.bare, { recursive: true, force: true });
    await waitForEvent(stderr, 'git-warning', { commit });
    expect(await withoutAge()).toEqual([
      `skills_serve_root_version_info{root="0",kind="git",version="${commit}"} 1`,
      'skills_serve_root_stale{root="0",kind="git"} 1',
    ]);
  });
});
