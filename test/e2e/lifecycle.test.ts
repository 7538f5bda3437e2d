/**
 * The process around the protocol: stdout carries only JSON-RPC, initialize is answered before the first index
 * build ends while skills/list waits for a complete catalog, clean exit on EOF and signals, CLI errors.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { cli } from '../helpers/cli.js';
import { waitFor } from '../helpers/live.js';
import { eventsOf, hasEvent, logLines } from '../helpers/logs.js';
import { REPO, SAMPLE_SKILLS } from '../helpers/server.js';
import { initializeRequest, SERVER_DEFAULT_LOG_LEVEL, spawnWire, stopAll } from '../helpers/wire.js';

afterEach(stopAll);

const VERSION = (
  JSON.parse(
    spawnSync('node', ['-p', 'JSON.stringify(require("./package.json"))'], { cwd: REPO, encoding: 'utf8' }).stdout,
  ) as { version: string }
).version;

describe('stdio lifecycle', () => {
  let bigTree: string;
  const BIG_SKILLS = 1500;
  beforeAll(() => {
    bigTree = mkdtempSync(path.join(os.tmpdir(), 'skills-serve-big-'));
    for (let index = 0; index < BIG_SKILLS; index++) {
      const name = `skill-${String(index).padStart(4, '0')}`;
      mkdirSync(path.join(bigTree, name, 'references'), { recursive: true });
      writeFileSync(
        path.join(bigTree, name, 'SKILL.md'),
        `---\nname: ${name}\ndescription: Synthetic skill number ${index}.\n---\n# ${name}\n`,
      );
      for (let file = 0; file < 6; file++)
        writeFileSync(
          path.join(bigTree, name, 'references', `r${file}.md`),
          `reference ${file} of ${name}\n`.repeat(40),
        );
    }
  });
  afterAll(() => rmSync(bigTree, { recursive: true, force: true }));

  it.each([
    ['with compat surfaces (the default)', []],
    ['with --compat off', ['--compat', 'off']],
  ])(
    '%s, answers initialize before the first index build ends, and skills/list only with the complete catalog',
    async (_label, flags) => {
      const server = spawnWire({ args: [bigTree, ...flags] });
      server.send(initializeRequest(1));
      const initialized = await server.waitFor((message) => message['id'] === 1);
      const builtWhenInitialized = hasEvent(server.stderr(), 'index-built');
      server.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      let listed = 0;
      let cursor: string | undefined;
      for (let id = 2; ; id++) {
        server.send({ jsonrpc: '2.0', id, method: 'skills/list', params: cursor === undefined ? {} : { cursor } });
        const page = (await server.waitFor((message) => message['id'] === id, 30_000))['result'] as {
          skills: unknown[];
          nextCursor?: string;
        };
        listed += page.skills.length;
        cursor = page.nextCursor;
        if (cursor === undefined) break;
      }
      expect((initialized['result'] as Record<string, unknown>)['protocolVersion']).toBe('2025-11-25');
      expect(builtWhenInitialized).toBe(false);
      expect(listed).toBe(BIG_SKILLS);
      server.child.stdin?.end();
      expect(await server.exited()).toEqual({ code: 0, signal: null });
    },
    60_000,
  );

  it('writes only JSON-RPC messages to stdout, also for bad requests, and exits 0 when stdin ends', async () => {
    const server = spawnWire({ args: [SAMPLE_SKILLS], env: SERVER_DEFAULT_LOG_LEVEL });
    await server.handshake();
    server.send({ jsonrpc: '2.0', id: 2, method: 'skills/list', params: {} });
    server.send({ jsonrpc: '2.0', id: 3, method: 'resources/read', params: { uri: 'skill://nope/SKILL.md' } });
    server.send({ jsonrpc: '2.0', id: 4, method: 'no/such/method', params: {} });
    server.send({ jsonrpc: '2.0', id: 5, method: 'skills/get', params: { uri: 42 } });
    const errors = await Promise.all([3, 4, 5].map((id) => server.waitFor((message) => message['id'] === id)));
    await server.waitFor((message) => message['id'] === 2);
    expect(errors.map((message) => (message['error'] as { code: number }).code)).toEqual([-32602, -32601, -32602]);
    server.child.stdin?.end();
    expect(await server.exited()).toEqual({ code: 0, signal: null });
    expect(server.messages.length).toBeGreaterThanOrEqual(5);
    expect(server.badLines).toEqual([]);
  });

  it('answers a last request that stdin ended without its newline, then exits 0', async () => {
    const server = spawnWire({ args: [SAMPLE_SKILLS], env: SERVER_DEFAULT_LOG_LEVEL });
    await server.handshake();
    server.child.stdin?.end(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }));
    expect(await server.waitFor((message) => message['id'] === 2)).toEqual({ jsonrpc: '2.0', id: 2, result: {} });
    expect(await server.exited()).toEqual({ code: 0, signal: null });
  });

  it.each(['SIGINT', 'SIGTERM'] as const)('exits 0 on %s', async (signal) => {
    const server = spawnWire({ args: [SAMPLE_SKILLS] });
    server.send(initializeRequest(1));
    await server.waitFor((message) => message['id'] === 1);
    server.child.kill(signal);
    expect(await server.exited()).toEqual({ code: 0, signal: null });
    expect(eventsOf(server.stderr(), 'stopping')).toMatchObject([{ level: 30, reason: signal }]);
  });

  it('at --log-level info, logs the resolved roots, the skill count and the number of diagnostics to stderr at startup', async () => {
    const server = spawnWire({
      args: [path.relative(process.cwd(), SAMPLE_SKILLS), '--log-level', 'info'],
      env: SERVER_DEFAULT_LOG_LEVEL,
    });
    server.send(initializeRequest(1));
    server.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    server.send({ jsonrpc: '2.0', id: 2, method: 'skills/list', params: {} });
    await server.waitFor((message) => message['id'] === 2);
    server.child.stdin?.end();
    await server.exited();
    const logs = logLines(server.stderr());
    // Every stderr line is a JSON log record.
    expect(logs).toHaveLength(server.stderr().trim().split('\n').length);
    expect(eventsOf(logs, 'serving')).toMatchObject([{ transport: 'stdio', roots: [SAMPLE_SKILLS] }]);
    expect(eventsOf(logs, 'index-built')).toMatchObject([{ skills: 6, diagnostics: 0, generation: 1 }]);
  });
});

describe('default log level over stdio (stderr a pipe, as hosts run it)', () => {
  it('writes nothing to stderr on a clean start and stop, and one warning line for all the diagnostics', async () => {
    const clean = spawnWire({ args: [SAMPLE_SKILLS], env: SERVER_DEFAULT_LOG_LEVEL });
    await clean.handshake();
    clean.send({ jsonrpc: '2.0', id: 2, method: 'skills/list', params: {} });
    await clean.waitFor((message) => message['id'] === 2);
    clean.child.stdin?.end();
    expect(await clean.exited()).toEqual({ code: 0, signal: null });
    expect(clean.stderr()).toBe('');

    const root = mkdtempSync(path.join(os.tmpdir(), 'skills-serve-diag-'));
    try {
      mkdirSync(path.join(root, 'bad'));
      writeFileSync(
        path.join(root, 'bad', 'SKILL.md'),
        '---\nname: other\ndescription: Named after another folder.\n---\n',
      );
      const broken = spawnWire({ args: [root], env: SERVER_DEFAULT_LOG_LEVEL });
      await broken.handshake();
      broken.send({ jsonrpc: '2.0', id: 2, method: 'skills/list', params: {} });
      await broken.waitFor((message) => message['id'] === 2);
      broken.child.stdin?.end();
      expect(await broken.exited()).toEqual({ code: 0, signal: null });
      const lines = broken
        .stderr()
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      // One line for the start, whatever the number of diagnostics: hosts record a server's stderr as errors.
      expect(lines).toEqual([
        expect.objectContaining({
          level: 40,
          event: 'diagnostics',
          errors: 1,
          warnings: 0,
          rules: ['name-mismatch'],
          msg: expect.stringContaining(`1 skill not served (${path.join(root, 'bad', 'SKILL.md')}:2: `),
        }),
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('--http keeps info lines, which say where it listens', async () => {
    const server = spawnWire({ args: ['--http', '0', SAMPLE_SKILLS], env: SERVER_DEFAULT_LOG_LEVEL });
    const listening = async (): Promise<boolean> => server.stderr().includes('http://127.0.0.1:');
    await waitFor(listening);
    server.child.kill('SIGTERM');
    expect(await server.exited()).toEqual({ code: 0, signal: null });
  });
});

describe('command line', () => {
  it('prints the version', () => {
    expect(cli(['--version'])).toEqual({ status: 0, stdout: `${VERSION}\n`, stderr: '' });
  });

  it('prints help naming the options', () => {
    const help = cli(['--help']);
    expect(help.status).toBe(0);
    for (const text of ['serve', 'check', 'manifest', '--version', '--help']) expect(help.stdout).toContain(text);
    const serveHelp = cli(['serve', '--help']);
    expect(serveHelp.status).toBe(0);
    for (const flag of ['--log-level', '--page-size', '--no-watch', '--poll', '--compat'])
      expect(serveHelp.stdout).toContain(flag);
  });

  it('exits 1 naming the resolved absolute path of a missing root or a file given as root', () => {
    expect(cli(['./no-such-skills-dir'], process.cwd())).toEqual({
      status: 1,
      stdout: '',
      stderr: `skills-serve: skills root ${path.resolve('no-such-skills-dir')} cannot be used (it does not exist)\n`,
    });
    // git's scp-like syntax is not a folder: the message says how to write it as a git root.
    expect(cli(['git@github.com:acme/skills'], process.cwd())).toEqual({
      status: 1,
      stdout: '',
      stderr:
        `skills-serve: skills root ${path.resolve('git@github.com:acme/skills')} cannot be used (it does not exist); ` +
        'for a git remote, write git+ssh://git@github.com/acme/skills\n',
    });
    const file = path.join(SAMPLE_SKILLS, 'pdf-summaries', 'SKILL.md');
    expect(cli([file])).toEqual({
      status: 1,
      stdout: '',
      stderr: `skills-serve: skills root ${file} is not a directory\n`,
    });
  });

  it.each([
    [[], "error: missing required argument 'roots'"],
    [
      ['--page-size', '0', SAMPLE_SKILLS],
      `error: option '--page-size <n>' argument '0' is invalid. --page-size must be an integer from 1 to 10000 (got "0")`,
    ],
    [
      ['--log-level', 'loud', SAMPLE_SKILLS],
      "error: option '--log-level <level>' argument 'loud' is invalid. Allowed choices are trace, debug, info, warn, error, fatal, silent.",
    ],
    [['--bogus', SAMPLE_SKILLS], "error: unknown option '--bogus'"],
  ])('exits 2 on a usage error: %j', (args, error) => {
    expect(cli(args)).toEqual({ status: 2, stdout: '', stderr: `${error}\n(run skills-serve --help for usage)\n` });
  });
});

describe('--strict', () => {
  const warningTree = (): string => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'skills-serve-strict-'));
    mkdirSync(path.join(dir, 's'));
    writeFileSync(path.join(dir, 's', 'SKILL.md'), '---\nname: s\ndescription: Fine skill.\n---\nBody.\n');
    writeFileSync(path.join(dir, 's', 'prod.env'), 'TOKEN=x\n');
    return dir;
  };

  it('check --strict exits 1 on warnings that plain check lets pass', () => {
    const dir = warningTree();
    try {
      expect(cli(['check', dir]).status).toBe(0);
      const strict = cli(['check', '--strict', dir]);
      expect(strict.status).toBe(1);
      expect(strict.stdout).toContain('[secret-file]');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('serve --strict lists the diagnostics on stderr and exits 1 instead of serving', async () => {
    const dir = warningTree();
    try {
      const server = spawnWire({ args: ['--strict', dir], env: SERVER_DEFAULT_LOG_LEVEL });
      server.send(initializeRequest(1));
      expect(await server.exited()).toEqual({ code: 1, signal: null });
      const logs = logLines(server.stderr());
      expect(eventsOf(logs, 'diagnostic')).toMatchObject([
        { level: 50, rule: 'secret-file', severity: 'warning', file: path.join(dir, 's', 'prod.env') },
      ]);
      expect(eventsOf(logs, 'strict-failed')).toMatchObject([{ level: 60, diagnostics: 1 }]);
      expect(eventsOf(logs, 'index-built')).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
