/**
 * The discovery feed against the real installer (`skills` 1.7.4 on npm, on Node 22), offline: the server and every
 * installer run share one network namespace with loopback only (`unshare -n` for the server, `nsenter` into it for the
 * rest), each installer run in a throwaway HOME with telemetry off. On sample-skills and a generated 400-skill catalog:
 * `skills add http://127.0.0.1:PORT --skill '*' -a claude-code -a codex -g -y --copy` installs every skill the feed
 * publishes, each file byte-identical to the tree; an edit on the server reaches `skills update -g -y`; the static
 * export, served by a plain static file server, installs the same bytes, and a tampered artifact is refused. Then
 * stock Claude Code, with no MCP server configured, started offline in that HOME with the stand-in model, describes
 * every installed skill in its first model request (its native listing).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import {
  closeSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { sha256 } from '../helpers/disk.js';
import { waitFor } from '../helpers/live.js';
import { eventsOf } from '../helpers/logs.js';
import { BIN, SAMPLE_SKILLS } from '../helpers/server.js';
import { published } from './cases.js';
import { firstModelRequest, measure, reportLine } from './discoverability.js';
import { generatedCatalog, HostUser, STEP_MS } from './harness.js';
import { skillsCli } from './hosts.mjs';

const FEED = '.well-known/agent-skills';

/** A process in a network namespace of its own (loopback only); commands join it with `nsenter`. */
interface Namespaced {
  readonly child: ChildProcess;
  stderr(): string;
}

/**
 * Starts `node args…` alone in a new network namespace with loopback up. Its stderr goes to a file: the test blocks in
 * `spawnSync` while the installer runs, and a pipe nobody reads would stall the server's log writes.
 */
function startInNamespace(args: readonly string[]): Namespaced {
  const log = path.join(realpathSync(mkdtempSync(path.join(os.tmpdir(), 'skills-serve-feed-log-'))), 'stderr.log');
  roots.push(path.dirname(log));
  const fd = openSync(log, 'w');
  const child = spawn('unshare', ['-n', 'sh', '-c', 'ip link set lo up && exec "$0" "$@"', process.execPath, ...args], {
    stdio: ['ignore', 'ignore', fd],
  });
  closeSync(fd);
  return { child, stderr: () => readFileSync(log, 'utf8') };
}

/** Runs a command in `ns`'s network namespace. */
function inNamespace(ns: Namespaced, command: readonly string[], cwd?: string): ReturnType<typeof spawnSync> {
  return spawnSync('nsenter', ['-t', String(ns.child.pid), '-n', ...command], {
    encoding: 'utf8',
    timeout: STEP_MS * 3,
    maxBuffer: 64 * 1024 * 1024,
    ...(cwd === undefined ? {} : { cwd }),
  });
}

/** GETs `url` from inside the namespace: the body, as base64 (so bytes survive). */
function fetchBytes(ns: Namespaced, url: string): Buffer {
  const script = `fetch(${JSON.stringify(url)}).then(async (r) => { if (!r.ok) process.exit(3); process.stdout.write(Buffer.from(await r.arrayBuffer()).toString('base64')); })`;
  const run = inNamespace(ns, [process.execPath, '-e', script]);
  if (run.status !== 0) throw new Error(`GET ${url}: exit ${run.status} ${String(run.stderr)}`);
  return Buffer.from(String(run.stdout), 'base64');
}

/** A throwaway installer user: HOME and a project folder. */
function newUser(): { home: string; project: string } {
  const root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'skills-serve-installer-')));
  const home = path.join(root, 'home');
  const project = path.join(root, 'project');
  mkdirSync(home);
  mkdirSync(project);
  roots.push(root);
  return { home, project };
}

const roots: string[] = [];

/** Runs the installer as `user`, inside the namespace, offline. */
function skills(ns: Namespaced, user: { home: string; project: string }, args: readonly string[]): string {
  const { node, cli } = skillsCli();
  const run = inNamespace(
    ns,
    [
      'env',
      '-i',
      `HOME=${user.home}`,
      `PATH=${path.dirname(node)}:/usr/bin:/bin`,
      'DISABLE_TELEMETRY=1',
      'DO_NOT_TRACK=1',
      'NO_COLOR=1',
      node,
      cli,
      ...args,
    ],
    user.project,
  );
  const output = `${String(run.stdout)}${String(run.stderr)}`;
  if (run.status !== 0) throw new Error(`skills ${args.join(' ')} exited ${run.status}:\n${output}`);
  return output;
}

/** Every file under `dir`, by `/`-separated relative path, with its bytes. */
function filesUnder(dir: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  const visit = (at: string, rel: string): void => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const childRel = rel === '' ? entry.name : `${rel}/${entry.name}`;
      if (entry.isDirectory()) visit(path.join(at, entry.name), childRel);
      else files.set(childRel, readFileSync(path.join(at, entry.name)));
    }
  };
  visit(dir, '');
  return files;
}

/** The skill directories of a tree by frontmatter name (`SKILL.md` folders; dot folders skipped). */
function skillDirs(tree: string): Map<string, string[]> {
  const byName = new Map<string, string[]>();
  const visit = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name.startsWith('.')) continue;
      if (entry.isDirectory()) visit(path.join(dir, entry.name));
      else if (entry.name === 'SKILL.md') {
        const name = /^name:\s*(\S+)/mu.exec(readFileSync(path.join(dir, entry.name), 'utf8'))?.[1] ?? '';
        byName.set(name, [...(byName.get(name) ?? []), dir]);
      }
    }
  };
  visit(tree);
  return byName;
}

/** The skills a feed of `tree` publishes: each name one skill holds, with its directory. */
function publishedSkills(tree: string): Map<string, string> {
  return new Map(
    [...skillDirs(tree)].flatMap(([name, dirs]) => (dirs.length === 1 ? [[name, dirs[0] as string] as const] : [])),
  );
}

/** Asserts `installed` holds exactly the files of `source`, byte for byte; returns how many files were compared. */
function expectSameFiles(installed: string, source: string): number {
  const got = filesUnder(installed);
  const want = filesUnder(source);
  expect([...got.keys()].sort()).toEqual([...want.keys()].sort());
  for (const [rel, bytes] of want) expect(sha256(got.get(rel) as Buffer), `${installed}/${rel}`).toBe(sha256(bytes));
  return want.size;
}

/** Asserts every published skill is installed for Claude Code and Codex; returns the files compared. */
function expectInstalled(home: string, published: ReadonlyMap<string, string>): number {
  let compared = 0;
  expect(readdirSync(path.join(home, '.claude', 'skills')).sort()).toEqual([...published.keys()].sort());
  for (const [name, dir] of published) {
    compared += expectSameFiles(path.join(home, '.claude', 'skills', name), dir);
    compared += expectSameFiles(path.join(home, '.agents', 'skills', name), dir);
  }
  return compared;
}

const ADD = ['--skill', '*', '-a', 'claude-code', '-a', 'codex', '-g', '-y', '--copy'];

/** Starts the server on `tree` in a namespace of its own; resolves with it and its port once it listens. */
async function startServer(tree: string): Promise<{ ns: Namespaced; port: number }> {
  const ns = startInNamespace([BIN, '--http', '127.0.0.1:0', '--log-level', 'info', tree]);
  const portOf = (): unknown => eventsOf(ns.stderr(), 'serving')[0]?.['port'];
  await waitFor(() => typeof portOf() === 'number');
  const port = portOf() as number;
  // The installer gives discovery 10 s: it starts once the first index is served.
  await waitFor(() => {
    fetchBytes(ns, `http://127.0.0.1:${port}/readyz`);
    return true;
  });
  return { ns, port };
}

afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

describe('skills 1.7.4 installs the discovery feed of sample-skills', () => {
  let tree: string;
  let server: { ns: Namespaced; port: number };

  beforeAll(async () => {
    tree = path.join(realpathSync(mkdtempSync(path.join(os.tmpdir(), 'skills-serve-feed-tree-'))), 'skills');
    roots.push(path.dirname(tree));
    cpSync(SAMPLE_SKILLS, tree, { recursive: true });
    server = await startServer(tree);
  });

  afterAll(() => {
    server?.ns.child.kill('SIGTERM');
  });

  it('installs every published skill byte for byte, and leaves out the two skills named "refunds" visibly', async () => {
    const user = newUser();
    const output = skills(server.ns, user, ['add', `http://127.0.0.1:${server.port}`, ...ADD]);
    const published = publishedSkills(tree);
    expect([...published.keys()].sort()).toEqual(['csv-cleaning', 'data-pipeline', 'pdf-summaries', 'report-writer']);
    const compared = expectInstalled(user.home, published);
    process.stdout.write(
      `installer: ${output.split('\n').find((line) => line.includes('Installed')) ?? ''}; ${compared} files byte-identical\n`,
    );
    const leftOut = (): Record<string, unknown>[] =>
      logLines(server.ns.stderr()).filter((line) => line.event === 'feed-skill-left-out');
    // The log is read between test steps (the installer ran synchronously).
    await waitFor(() => leftOut().length >= 2);
    expect(leftOut().map((line) => [line.rule, line.msg])).toEqual([
      [
        'feed-name-shared',
        'skill://acme/billing/refunds is left out of the discovery feed: 2 skills are named "refunds" (skill://acme/billing/refunds, skill://acme/support/refunds), and an installer would put them in one folder',
      ],
      [
        'feed-name-shared',
        'skill://acme/support/refunds is left out of the discovery feed: 2 skills are named "refunds" (skill://acme/billing/refunds, skill://acme/support/refunds), and an installer would put them in one folder',
      ],
    ]);
  });

  it("installed for Claude Code, every skill is in stock Claude Code's first model request once, with no MCP server", async () => {
    // Claude Code's own user (HOME, settings, the stand-in model), with no MCP server: the listing can only come from
    // the copies the installer puts into ~/.claude/skills.
    const user = new HostUser('claude', undefined);
    try {
      skills(server.ns, user, [
        'add',
        `http://127.0.0.1:${server.port}`,
        '--skill',
        '*',
        '-a',
        'claude-code',
        '-g',
        '-y',
        '--copy',
      ]);
      const installed = publishedSkills(tree);
      expect(readdirSync(path.join(user.home, '.claude', 'skills')).sort()).toEqual([...installed.keys()].sort());
      // Each installed skill's name and description as the tree's frontmatter has them (the manifest reads it).
      const entries = published(tree).entries.filter((entry) => installed.has(entry.name));
      expect(entries.map((entry) => entry.name).sort()).toEqual([...installed.keys()].sort());
      const prompt = 'Which skills can you use here? (FEED-INSTALLED-PROBE)';
      // Synchronous: the run ends after the stand-in model logged and answered the requests.
      const run = user.offline(['-p', prompt]);
      expect(run.stdout).toBe('FAKE-MODEL-REPLY\n');
      expect(user.serverStarts()).toBe(0);
      const request = firstModelRequest(user, prompt);
      if (request === undefined)
        throw new Error(`Claude Code sent the model no request offering tools for "${prompt}"`);
      const measured = measure(request, entries);
      process.stdout.write(
        `${reportLine('Claude Code 2.1.332 (claude -p, no MCP server)', 'skills installed from the feed of sample-skills', measured)}\n`,
      );
      expect(measured.counts).toEqual(entries.map(() => 1));
    } finally {
      await user.close();
    }
  });

  it('brings an edit on the server to `skills update`', async () => {
    const user = newUser();
    skills(server.ns, user, ['add', `http://127.0.0.1:${server.port}`, ...ADD]);
    const guide = path.join(tree, 'report-writer', 'references', 'style-guide.md');
    const edited = `${readFileSync(guide, 'utf8')}\nEdited on the server for the update test.\n`;
    const index = (): string =>
      fetchBytes(server.ns, `http://127.0.0.1:${server.port}/${FEED}/index.json`).toString('utf8');
    const before = index();
    writeFileSync(guide, edited);
    await waitFor(() => index() !== before);
    const output = skills(server.ns, user, ['update', '-g', '-y']);
    expect(
      readFileSync(path.join(user.home, '.claude', 'skills', 'report-writer', 'references', 'style-guide.md'), 'utf8'),
    ).toBe(edited);
    expectInstalled(user.home, publishedSkills(tree));
    process.stdout.write(
      `installer update: ${output
        .split('\n')
        .filter((line) => /updated|Updated/u.test(line))
        .join(' | ')}\n`,
    );
  });

  it('exports the same artifacts as static files; served statically they install the same bytes, a tampered one is refused', async () => {
    const site = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'skills-serve-feed-site-')));
    roots.push(site);
    const exported = spawnSync(process.execPath, [BIN, 'export', '--well-known', site, tree], { encoding: 'utf8' });
    expect(exported.status).toBe(0);
    const files = filesUnder(path.join(site, FEED));
    expect([...files.keys()].sort()).toEqual([
      'csv-cleaning.zip',
      'data-pipeline.zip',
      'index.json',
      'pdf-summaries/SKILL.md',
      'report-writer.zip',
    ]);
    for (const [rel, bytes] of files)
      expect(sha256(fetchBytes(server.ns, `http://127.0.0.1:${server.port}/${FEED}/${rel}`)), rel).toBe(sha256(bytes));

    const zip = path.join(site, FEED, 'csv-cleaning.zip');
    const tampered = readFileSync(zip);
    tampered[tampered.length - 30] = (tampered[tampered.length - 30] as number) ^ 1;
    writeFileSync(zip, tampered);
    const staticServer = `const http = require('node:http'), fs = require('node:fs'), path = require('node:path');
      http.createServer((req, res) => {
        const file = path.join(${JSON.stringify(site)}, decodeURIComponent(req.url.split('?')[0]));
        fs.readFile(file, (error, bytes) => error ? res.writeHead(404).end() : res.writeHead(200).end(bytes));
      }).listen(0, '127.0.0.1', function () { process.stderr.write('port ' + this.address().port + '\\n'); });`;
    const child = spawn('nsenter', ['-t', String(server.ns.child.pid), '-n', process.execPath, '-e', staticServer], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    try {
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
      await waitFor(() => /port \d+/u.test(stderr));
      const port = /port (\d+)/u.exec(stderr)?.[1] as string;
      const user = newUser();
      const output = skills(server.ns, user, ['add', `http://127.0.0.1:${port}`, ...ADD]);
      const published = publishedSkills(tree);
      published.delete('csv-cleaning');
      expectInstalled(user.home, published);
      process.stdout.write(
        `installer, static export with csv-cleaning.zip tampered: ${output
          .split('\n')
          .filter((line) => /Found|Installed/u.test(line))
          .join(' | ')}\n`,
      );
    } finally {
      child.kill('SIGTERM');
    }
  });
});

describe('skills 1.7.4 installs the discovery feed of a generated 400-skill catalog', () => {
  it('installs all 400, byte for byte', async () => {
    const tree = generatedCatalog(400);
    roots.push(tree);
    const server = await startServer(tree);
    try {
      const user = newUser();
      skills(server.ns, user, ['add', `http://127.0.0.1:${server.port}`, ...ADD]);
      const published = publishedSkills(tree);
      expect(published.size).toBe(400);
      expectInstalled(user.home, published);
    } finally {
      server.ns.child.kill('SIGTERM');
    }
  });
});

/** The JSON log lines of a server's stderr. */
function logLines(stderr: string): Record<string, unknown>[] {
  return stderr.split('\n').flatMap((line) => {
    try {
      return [JSON.parse(line) as Record<string, unknown>];
    } catch {
      return [];
    }
  });
}
