/**
 * The Dockerfile, checked without a Docker daemon: its text is parsed into stages and instructions and held to the
 * image's contract (official Node base with a pinned major, multi-stage, non-root, exec-form ENTRYPOINT so Node is
 * PID 1, CMD ["/skills"], nothing installed in the runtime stage). Then the final stage's /app is assembled from
 * exactly the files its COPY instructions take out of the build stage (whose /app mirrors this checkout, built by
 * `npm test`), and the ENTRYPOINT + CMD command line is run as written, with `node` → this Node, `/app` → that
 * assembled directory and `/skills` → sample-skills.
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { requireDist } from '../helpers/dist.js';
import { eventsOf } from '../helpers/logs.js';
import { SAMPLE_SKILL_URIS } from '../helpers/sample.js';
import { REPO, SAMPLE_SKILLS } from '../helpers/server.js';
import { spawnWire, stopAll, type Wire } from '../helpers/wire.js';

/** One instruction, continuation lines joined; `keyword` upper-cased. */
interface Instruction {
  readonly keyword: string;
  readonly args: string;
  readonly line: number;
}

interface Stage {
  readonly image: string;
  readonly name: string | undefined;
  readonly instructions: readonly Instruction[];
}

/** Parses Dockerfile text: drops comments and blank lines, joins `\`-continued lines (default escape character). */
function parseDockerfile(text: string): Instruction[] {
  const instructions: Instruction[] = [];
  let pending = '';
  let startLine = 0;
  text.split(/\r?\n/u).forEach((raw, index) => {
    const trimmed = raw.trim();
    if (trimmed.startsWith('#') || (trimmed === '' && pending === '')) return;
    if (pending === '') startLine = index + 1;
    const continued = trimmed.endsWith('\\');
    pending += `${continued ? trimmed.slice(0, -1) : trimmed} `;
    if (continued) return;
    const match = /^(\S+)\s*(.*)$/su.exec(pending.trim());
    if (match !== null)
      instructions.push({ keyword: match[1]!.toUpperCase(), args: match[2]!.trim(), line: startLine });
    pending = '';
  });
  return instructions;
}

/** Splits instructions into stages at each FROM (`FROM [--platform=…] image [AS name]`). */
function stagesOf(instructions: readonly Instruction[]): Stage[] {
  const stages: { image: string; name: string | undefined; instructions: Instruction[] }[] = [];
  for (const instruction of instructions) {
    if (instruction.keyword === 'FROM') {
      const words = instruction.args.split(/\s+/u).filter((word) => !word.startsWith('--'));
      stages.push({
        image: words[0]!,
        name: words[1]?.toUpperCase() === 'AS' ? words[2] : undefined,
        instructions: [],
      });
    } else {
      stages.at(-1)?.instructions.push(instruction);
    }
  }
  return stages;
}

/** The JSON array of an exec-form instruction, or undefined for the shell form. */
function execForm(args: string): string[] | undefined {
  if (!args.startsWith('[')) return undefined;
  const parsed = JSON.parse(args) as unknown;
  return Array.isArray(parsed) && parsed.every((item) => typeof item === 'string') ? parsed : undefined;
}

/** A COPY instruction: its flags, sources and destination. */
function copyOf(instruction: Instruction): { from: string | undefined; sources: string[]; dest: string } {
  const words = execForm(instruction.args) ?? instruction.args.split(/\s+/u);
  const flags = words.filter((word) => word.startsWith('--'));
  const paths = words.filter((word) => !word.startsWith('--'));
  const from = flags.find((flag) => flag.startsWith('--from='))?.slice('--from='.length);
  return { from, sources: paths.slice(0, -1), dest: paths.at(-1)! };
}

function last(stage: Stage, keyword: string): Instruction | undefined {
  return stage.instructions.filter((instruction) => instruction.keyword === keyword).at(-1);
}

/** The stage's working directory after its last WORKDIR (absolute paths only, as in this Dockerfile). */
function workdirOf(stage: Stage): string {
  return last(stage, 'WORKDIR')?.args ?? '/';
}

/** `node:<major>[-variant]` from Docker Hub's official library, optionally pinned by digest. */
const OFFICIAL_NODE =
  /^(?:docker\.io\/)?(?:library\/)?node:(\d+)(?:\.\d+){0,2}(?:-[a-z0-9.]+)*(?:@sha256:[0-9a-f]{64})?$/u;

const dockerfile = readFileSync(path.join(REPO, 'Dockerfile'), 'utf8');
const stages = stagesOf(parseDockerfile(dockerfile));
const final = stages.at(-1)!;
const engines = (JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { engines: { node: string } })
  .engines.node;

describe('Dockerfile', () => {
  it('is multi-stage, every stage on an official Node image with the same pinned major, inside engines', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    const majors = stages.map((stage) => OFFICIAL_NODE.exec(stage.image)?.[1]);
    expect(
      majors.every((major) => major !== undefined),
      `bases: ${stages.map((stage) => stage.image).join(', ')}`,
    ).toBe(true);
    expect(new Set(majors).size).toBe(1);
    expect(Number(majors[0])).toBeGreaterThanOrEqual(Number(/^>=(\d+)/u.exec(engines)![1]));
  });

  it('runs the final stage as a non-root user', () => {
    const user = last(final, 'USER')?.args;
    expect(user).toBeDefined();
    expect(user!.split(':')[0]).not.toMatch(/^(root|0)$/u);
  });

  it('starts Node directly (exec-form ENTRYPOINT, no shell) with CMD ["/skills"], and declares no VOLUME', () => {
    expect(execForm(last(final, 'ENTRYPOINT')?.args ?? '')).toEqual(['node', '/app/bin/skills-serve.js']);
    expect(execForm(last(final, 'CMD')?.args ?? '')).toEqual(['/skills']);
    // A VOLUME would turn a forgotten `-v …:/skills:ro` into an empty anonymous volume served without complaint.
    expect(
      stages.flatMap((stage) => stage.instructions).filter((instruction) => instruction.keyword === 'VOLUME'),
    ).toEqual([]);
  });

  it('installs git (for git roots) from Debian in the final stage, without recommends, and leaves no apt lists', () => {
    const runs = final.instructions
      .filter((instruction) => instruction.keyword === 'RUN')
      .map((instruction) => instruction.args);
    const install = runs.find((args) => /\bapt-get install\b/u.test(args));
    expect(install).toBeDefined();
    expect(install).toMatch(/apt-get install -y --no-install-recommends git ca-certificates\b/u);
    expect(install).toMatch(/rm -rf \/var\/lib\/apt\/lists\/\*$/u);
    // Installed as root, before the switch to the unprivileged user.
    const userLine = last(final, 'USER')?.line ?? 0;
    expect(final.instructions.find((instruction) => instruction.args === install)!.line).toBeLessThan(userLine);
  });

  it('installs no npm packages in the final stage and copies no node_modules into it', () => {
    const runs = final.instructions.filter((instruction) => instruction.keyword === 'RUN');
    for (const run of runs) expect(run.args).not.toMatch(/\b(npm|npx|yarn|pnpm|corepack)\b/u);
    for (const copy of final.instructions.filter((instruction) => ['COPY', 'ADD'].includes(instruction.keyword))) {
      expect(copyOf(copy).sources.join(' ')).not.toMatch(/node_modules|^\.$|^\/app\/?$/u);
    }
  });

  it('builds from a context that .dockerignore limits to what the build stage copies', () => {
    const patterns = readFileSync(path.join(REPO, '.dockerignore'), 'utf8')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('#'));
    expect(patterns[0]).toBe('*');
    const included = new Set(
      patterns.filter((line) => line.startsWith('!')).map((line) => line.slice(1).replace(/\/$/u, '')),
    );
    const fromContext = stages
      .flatMap((stage) => stage.instructions)
      .filter((instruction) => instruction.keyword === 'COPY' && copyOf(instruction).from === undefined)
      .flatMap((instruction) =>
        copyOf(instruction).sources.map((source) => source.replace(/^\.\//u, '').split('/')[0]!),
      );
    expect(fromContext.length).toBeGreaterThan(0);
    for (const source of fromContext) expect(included, source).toContain(source);
    for (const excluded of ['node_modules', 'dist', '.git']) expect(included).not.toContain(excluded);
  });
});

describe('the image entrypoint, run on the files of the final stage alone', () => {
  let temp: string;
  let appDir: string;
  let argv: string[];

  beforeAll(() => {
    // The build stage's /app/dist is this checkout's dist/, made by `npm run build`.
    requireDist();
    temp = mkdtempSync(path.join(os.tmpdir(), 'skills-serve-image-'));
    appDir = path.join(temp, 'app');
    const byName = new Map(stages.map((stage) => [stage.name, stage]));
    for (const instruction of final.instructions.filter((candidate) => candidate.keyword === 'COPY')) {
      const copy = copyOf(instruction);
      // With --from, a source is a path in that stage, whose WORKDIR holds a copy of this checkout (plus the build);
      // without it, a path in the build context, i.e. this checkout.
      let base = '';
      if (copy.from !== undefined) {
        const stage = byName.get(copy.from);
        expect(stage, `COPY --from=${copy.from}`).toBeDefined();
        base = workdirOf(stage!);
      }
      const dest = mapImagePath(path.posix.resolve(workdirOf(final), copy.dest));
      const intoDirectory = copy.dest.endsWith('/') || copy.sources.length > 1;
      for (const source of copy.sources) {
        const relative = copy.from === undefined ? source : path.posix.relative(base, path.posix.resolve(base, source));
        expect(relative.startsWith('..'), `${source} is outside the build stage's ${base}`).toBe(false);
        const onDisk = path.join(REPO, relative);
        if (statSync(onDisk).isDirectory()) {
          cpSync(onDisk, dest, { recursive: true });
        } else {
          const target = intoDirectory ? path.join(dest, path.basename(onDisk)) : dest;
          mkdirSync(path.dirname(target), { recursive: true });
          cpSync(onDisk, target);
        }
      }
    }
    const command = [...execForm(last(final, 'ENTRYPOINT')!.args)!, ...execForm(last(final, 'CMD')!.args)!];
    expect(command[0]).toBe('node');
    argv = command
      .slice(1)
      .map((arg) => (arg === '/skills' ? SAMPLE_SKILLS : arg.startsWith('/app/') ? mapImagePath(arg) : arg));
  });

  afterEach(stopAll);
  afterAll(() => {
    if (temp !== undefined) rmSync(temp, { recursive: true, force: true });
  });

  /** Starts the entrypoint like `docker run -i` does: stdin open, no TTY, in the final stage's WORKDIR. */
  function startContainer(): Wire {
    // Info level, as `docker run -e SKILLS_SERVE_LOG_LEVEL=info` would give: the shutdown line shows the handler ran.
    const [entry, ...args] = argv;
    if (entry === undefined) throw new Error('the image runs node without a script');
    return spawnWire({
      bin: entry,
      args,
      env: { SKILLS_SERVE_LOG_LEVEL: 'info' },
      cwd: mapImagePath(workdirOf(final)),
    });
  }

  /** An absolute path in the final image (under /app) → its place in the assembled directory. */
  function mapImagePath(imagePath: string): string {
    if (imagePath !== '/app' && !imagePath.startsWith('/app/')) throw new Error(`${imagePath} is outside /app`);
    return path.join(appDir, imagePath.slice('/app'.length));
  }

  it('serves the six sample skills and exits 0 on SIGTERM, which Node as PID 1 only gets through its own handler', async () => {
    const server = startContainer();
    await server.handshake();
    server.send({ jsonrpc: '2.0', id: 2, method: 'skills/list', params: {} });
    const listed = await server.waitFor((message) => message['id'] === 2);
    const skills = (listed['result'] as { skills: { uri: string }[] }).skills.map((skill) => skill.uri);
    expect(skills).toEqual(SAMPLE_SKILL_URIS);
    // Exit code 0 (not death by signal) shows a SIGTERM handler ran: the kernel drops SIGTERM for a PID 1 without one.
    server.child.kill('SIGTERM');
    expect(await server.exited()).toEqual({ code: 0, signal: null });
    expect(eventsOf(server.stderr(), 'stopping')).toMatchObject([{ reason: 'SIGTERM' }]);
  });

  it('exits 0 at once when stdin is at EOF, which is what `docker run` without -i gives it', async () => {
    const server = startContainer();
    server.child.stdin?.end();
    expect(await server.exited()).toEqual({ code: 0, signal: null });
    expect(server.messages).toEqual([]);
    expect(server.badLines).toEqual([]);
  });
});
