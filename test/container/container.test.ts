/**
 * The image built from the repository's Dockerfile, unchanged (scripts/container-image.mjs, which `npm run
 * test:container` runs first), run with podman the way docs/container.md tells users to run it with Docker, and
 * held to what that page promises: over `run -i` with the skills mounted read-only at /skills, an MCP client lists
 * the skills and reads every file, byte for byte as on disk and hashing to the published digest, from a server that
 * runs as uid 1000 and is the container's PID 1; without a volume it exits 1 naming /skills; `podman stop` ends it
 * with exit 0; `--poll` follows an edit on a bind mount; `--http` answers on a published port; a bare repository
 * mounted into a container without a network is served as a `git+file://` root. Runs as root (chown), as CI does.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { promises as fsp, readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';

import { sha256 } from '../helpers/disk.js';
import { createRemote } from '../helpers/git-repo.js';
import { eventsOf } from '../helpers/logs.js';
import { SAMPLE_SKILL_URIS } from '../helpers/sample.js';
import { connect, type Connection, type Era, eraClientOptions, ERAS, SAMPLE_SKILLS } from '../helpers/server.js';
import { makeTempDir, skillMd } from '../helpers/tree.js';
import { waitFor } from '../helpers/wait.js';
import { IMAGE, imageExists, LIMIT_FLAGS, podman, podmanArgs } from './podman.mjs';

/** Longest a container may take to start serving or to exit (ms): seconds when it works; this only stops a hang. */
const CONTAINER_MS = 60_000;
const TOKEN = 'container-test-token';

/** Makes `dir` and everything in it readable by the container's uid 1000 (mkdtemp makes 0700 directories). */
function readableByAll(dir: string): void {
  const result = spawnSync('chmod', ['-R', 'a+rX', dir]);
  if (result.status !== 0) throw new Error(`chmod -R a+rX ${dir} failed`);
}

/** A copy of the sample skills that the container's user can read. */
async function sampleCopy(): Promise<string> {
  const dir = await makeTempDir();
  await fsp.cp(SAMPLE_SKILLS, dir, { recursive: true });
  readableByAll(dir);
  return dir;
}

/** Every regular file below `root`, as sorted `/`-separated relative paths. */
function filesUnder(root: string): string[] {
  return readdirSync(root, { recursive: true, encoding: 'utf8' })
    .filter((rel) => statSync(path.join(root, rel)).isFile())
    .map((rel) => rel.split(path.sep).join('/'))
    .sort();
}

/** The relative path a `skill://` URI of a root without prefix names. */
function relativeOf(uri: string): string {
  return uri.slice('skill://'.length).split('/').map(decodeURIComponent).join('/');
}

/**
 * `podman run -i <flags> IMAGE <args>` as podman's arguments: a host config's `docker` words, and this machine's. A
 * stdio server needs no network (git roots here are `file://`), so it gets none.
 */
function runArgs(flags: readonly string[], args: readonly string[] = []): string[] {
  return podmanArgs([
    'run',
    '-i',
    ...LIMIT_FLAGS,
    '--network=none',
    '-e',
    'SKILLS_SERVE_LOG_LEVEL=info',
    ...flags,
    IMAGE,
    ...args,
  ]);
}

/** A `podman` process this file started and reads the exit of. */
interface Podman {
  readonly child: ChildProcess;
  stderr(): string;
  /** The exit code (or signal), once it exited; rejects after {@link CONTAINER_MS}. */
  exited(): Promise<number | string>;
}

const processes: ChildProcess[] = [];

/** Starts `podman <args>` with stdin open and never written to (so end-of-input cannot be what ends it). */
function startPodman(args: readonly string[]): Podman {
  const child = spawn('podman', args, { stdio: ['pipe', 'ignore', 'pipe'] });
  processes.push(child);
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const exit = new Promise<number | string>((resolve) => {
    child.once('close', (code, signal) => resolve(code ?? signal ?? 'unknown'));
  });
  return {
    child,
    stderr: () => stderr,
    exited: () =>
      Promise.race([
        exit,
        new Promise<never>((_, reject) =>
          setTimeout(
            () => reject(new Error(`podman did not exit within ${CONTAINER_MS} ms:\n${stderr}`)),
            CONTAINER_MS,
          ),
        ),
      ]),
  };
}

/** A 127.0.0.1 port nothing listens on now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** The uid fields (real, effective, saved, filesystem), pid in its own namespace and argv of host process `pid`. */
function processOf(pid: number): { uids: string[]; innerPid: string | undefined; argv: string[] } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return {
    uids: /^Uid:\s+(.*)$/mu.exec(status)?.[1]?.trim().split(/\s+/u) ?? [],
    innerPid: /^NSpid:\s+(.*)$/mu.exec(status)?.[1]?.trim().split(/\s+/u).at(-1),
    argv: readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').slice(0, -1),
  };
}

describe('the Docker image, run with podman', () => {
  let connection: Connection | undefined;
  let counter = 0;
  const names: string[] = [];

  /** A container name of this run, removed after the test. */
  function containerName(): string {
    const name = `skills-serve-test-${process.pid}-${++counter}`;
    names.push(name);
    return name;
  }

  /** Runs the image with `podman run -i <flags>` and connects an MCP client over its stdio in `era`. */
  async function connectContainer(
    flags: readonly string[],
    args: readonly string[] = [],
    era: Era = ERAS[1],
  ): Promise<Connection> {
    connection = await connect(runArgs(flags, args), era, { command: 'podman' });
    return connection;
  }

  beforeAll(() => {
    if (!imageExists(IMAGE))
      throw new Error(`${IMAGE} is missing: run node scripts/container-image.mjs (npm run test:container does)`);
  });

  afterEach(async () => {
    await connection?.close();
    connection = undefined;
    for (const child of processes.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill();
    for (const name of names.splice(0)) podman(['rm', '--force', '--ignore', name]);
  });

  it('over run -i with a read-only volume: every file read as on disk, hashing to its digest; uid 1000, PID 1', async () => {
    const skills = await sampleCopy();
    const name = containerName();
    const server = await connectContainer(['--rm', '--name', name, '-v', `${skills}:/skills:ro`]);
    const { skills: listed } = await server.skills.list();
    expect(listed.map((skill) => skill.uri)).toEqual(SAMPLE_SKILL_URIS);
    const read = new Set<string>();
    for (const skill of listed) {
      for (const resource of skill.resources === 'dynamic' ? [] : skill.resources) {
        const disk = readFileSync(path.join(skills, relativeOf(resource.uri)));
        expect({ uri: resource.uri, digest: resource.digest, size: resource.size }).toEqual({
          uri: resource.uri,
          digest: sha256(disk),
          size: disk.length,
        });
        const file = await server.skills.read(skill, resource.uri);
        expect(file.verified).toBe(true);
        expect(sha256(file.bytes)).toBe(resource.digest);
        expect(Buffer.from(file.bytes).equals(disk), resource.uri).toBe(true);
        read.add(relativeOf(resource.uri));
      }
    }
    expect([...read].sort()).toEqual(filesUnder(skills));

    // The server itself, seen from the host: Node, exec'd as the container's PID 1, as the image's `node` user.
    const pid = Number(podman(['inspect', '--format', '{{.State.Pid}}', name]).stdout.trim());
    expect(processOf(pid)).toEqual({
      uids: ['1000', '1000', '1000', '1000'],
      innerPid: '1',
      argv: ['node', '/app/bin/skills-serve.js', '/skills'],
    });
  });

  it('exits 1 with a message naming /skills when no volume is mounted', async () => {
    const run = startPodman(runArgs(['--rm']));
    expect(await run.exited()).toBe(1);
    expect(run.stderr()).toContain('skills root /skills cannot be used (it does not exist)');
  });

  it('podman stop: the SIGTERM reaches Node as PID 1, which shuts down and exits 0', async () => {
    const skills = await sampleCopy();
    const name = containerName();
    // Without --rm, so that podman keeps the exit code.
    const server = await connectContainer(['--name', name, '-v', `${skills}:/skills:ro`]);
    expect((await server.skills.list()).skills.map((skill) => skill.uri)).toEqual(SAMPLE_SKILL_URIS);
    // podman sends SIGTERM, then SIGKILL after --time seconds (exit 137); 0 says the server's handler ran.
    expect(podman(['stop', '--time', '30', name], { timeoutMs: CONTAINER_MS }).status).toBe(0);
    expect(podman(['inspect', '--format', '{{.State.ExitCode}}', name]).stdout.trim()).toBe('0');
    await waitFor(() => eventsOf(server.stderr(), 'stopping').length > 0);
    expect(eventsOf(server.stderr(), 'stopping')).toMatchObject([{ reason: 'SIGTERM' }]);
  });

  it('--poll follows an edit on a bind mount: the host hears resources/updated, the list has the new digest', async () => {
    const skills = await sampleCopy();
    const server = await connectContainer(
      ['--rm', '--name', containerName(), '-v', `${skills}:/skills:ro`],
      ['--poll', '/skills'],
    );
    const uri = 'skill://report-writer/references/style-guide.md';
    const heard: string[] = [];
    server.client.setNotificationHandler('notifications/resources/updated', (notification) => {
      heard.push(notification.params.uri);
    });
    await server.client.subscribeResource({ uri });
    await waitFor(() => eventsOf(server.stderr(), 'watching', { mode: 'polling' }).length > 0, {
      timeoutMs: CONTAINER_MS,
      describe: () => `no "watching" event in polling mode:\n${server.stderr()}`,
    });

    // Saved the way editors save: a temporary file (a dot-name, ignored) renamed over the original.
    const edited = '# Style guide\n\nEdited on the host, served from the container.\n';
    const file = path.join(skills, relativeOf(uri));
    const temp = path.join(path.dirname(file), '.style-guide.md.tmp');
    await fsp.writeFile(temp, edited, { mode: 0o644 });
    await fsp.chmod(temp, 0o644);
    await fsp.rename(temp, file);
    await waitFor(() => heard.includes(uri), {
      describe: () => `no resources/updated for ${uri}; heard ${JSON.stringify(heard)}\n${server.stderr()}`,
    });

    const skill = (await server.skills.list()).skills.find((entry) => entry.uri === 'skill://report-writer/SKILL.md');
    const resource = skill?.resources === 'dynamic' ? undefined : skill?.resources.find((entry) => entry.uri === uri);
    expect(resource).toMatchObject({ uri, digest: sha256(edited), size: Buffer.byteLength(edited) });
    expect(Buffer.from((await server.skills.read(skill!, uri)).bytes).toString('utf8')).toBe(edited);
  });

  it('--http with a published port: a client over HTTP gets the list; podman stop ends it with exit 0', async () => {
    const skills = await sampleCopy();
    const port = await freePort();
    const name = containerName();
    const run = startPodman(
      podmanArgs([
        'run',
        '--rm',
        ...LIMIT_FLAGS,
        '--name',
        name,
        '-p',
        `127.0.0.1:${port}:8080`,
        '-v',
        `${skills}:/skills:ro`,
        IMAGE,
        '--http',
        '0.0.0.0:8080',
        '--http-token',
        TOKEN,
        '/skills',
      ]),
    );
    const base = `http://127.0.0.1:${port}`;
    await waitFor(async () => (await fetch(`${base}/readyz`)).status === 200, {
      timeoutMs: CONTAINER_MS,
      describe: () => `${base}/readyz never answered 200:\n${run.stderr()}`,
    });
    const client = new Client({ name: 'container-e2e', version: '1.0.0' }, eraClientOptions(ERAS[2]));
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
      }),
    );
    try {
      const { skills: listed } = await new SkillsClient(client).list();
      expect(listed.map((skill) => skill.uri)).toEqual(SAMPLE_SKILL_URIS);
      const data = listed.find((skill) => skill.uri === 'skill://data-pipeline/SKILL.md')!;
      const script = await new SkillsClient(client).read(data, 'skill://data-pipeline/scripts/validate.py');
      expect(script.verified).toBe(true);
      expect(Buffer.from(script.bytes)).toEqual(
        readFileSync(path.join(skills, 'data-pipeline', 'scripts', 'validate.py')),
      );
    } finally {
      await client.close();
    }
    expect(podman(['stop', '--time', '30', name], { timeoutMs: CONTAINER_MS }).status).toBe(0);
    expect(await run.exited()).toBe(0);
  });

  it('a git root: a bare repository mounted into a container without network, served as git+file://', async () => {
    const remote = await createRemote();
    const files: Record<string, Buffer> = {
      'skills/alpha/SKILL.md': Buffer.from(skillMd('alpha', 'Alpha, from git.')),
      'skills/alpha/assets/data.bin': Buffer.from([0, 1, 2, 255, 254, 13, 10]),
    };
    const v1 = await remote.commit({ ...files, 'README.md': 'not served: outside the subdirectory\n' });
    remote.tag('v1');
    // Owned by the container's user, as a user's own clone is: git refuses a repository another user owns ("dubious
    // ownership"; docs/container.md says what to do then).
    const chown = spawnSync('chown', ['-R', '1000:1000', remote.projectRoot]);
    expect(chown.status).toBe(0);
    const server = await connectContainer(
      ['--rm', '-v', `${remote.projectRoot}:/repos:ro`],
      ['git+file:///repos/skills.git#v1:skills'],
      ERAS[2],
    );
    const { skills: listed } = await server.skills.list();
    expect(listed.map((skill) => skill.uri)).toEqual(['skill://alpha/SKILL.md']);
    const alpha = listed[0]!;
    expect((alpha as { _meta?: unknown })._meta).toEqual({
      'dev.skills-serve/source': { source: 'file:///repos/skills.git', ref: 'v1', commit: v1, subdir: 'skills' },
    });
    const resources = alpha.resources === 'dynamic' ? [] : alpha.resources;
    const committed = (uri: string): Buffer => files[`skills/${relativeOf(uri)}`]!;
    expect(resources.map(({ uri, digest, size }) => ({ uri, digest, size }))).toEqual(
      ['skill://alpha/SKILL.md', 'skill://alpha/assets/data.bin'].map((uri) => ({
        uri,
        digest: sha256(committed(uri)),
        size: committed(uri).length,
      })),
    );
    for (const resource of resources) {
      const file = await server.skills.read(alpha, resource.uri);
      expect(file.verified).toBe(true);
      expect(Buffer.from(file.bytes)).toEqual(committed(resource.uri));
    }
  });
});
