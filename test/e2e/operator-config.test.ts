/**
 * What operators write in config files and environments: every flag's environment twin, on/off twins, an empty
 * token, roots listed twice or inside each other, manifest exit codes, startup diagnostics reaching a host that
 * connects later, and HTTP's 2025-era capabilities (found by a first-time user following the README).
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';

import { cli } from '../helpers/cli.js';
import { waitForEvent } from '../helpers/logs.js';
import { eraClientOptions, ERAS, type HttpServer, SAMPLE_SKILLS, startHttpServer } from '../helpers/server.js';
import { skillMd, tempTrees } from '../helpers/tree.js';
import { spawnWire } from '../helpers/wire.js';

const trees = tempTrees();
afterEach(() => trees.removeAll());

describe('environment twins', () => {
  /** The flags `<command> --help` lists, each with the environment variable it names (`null`: none). */
  function twins(command: string): Record<string, string | null> {
    const help = cli([command, '--help']);
    expect(help.status).toBe(0);
    const options = help.stdout.slice(help.stdout.indexOf('\nOptions:\n'));
    const blocks = options.split(/\n(?= {2}(?:-[A-Za-z], )?--)/u).slice(1);
    return Object.fromEntries(
      blocks.map((block) => {
        const flag = /--[a-z-]+/u.exec(block)?.[0] ?? '';
        return [flag, /env:\s+(SKILLS_SERVE_[A-Z_]+)/u.exec(block.replace(/\s+/gu, ' '))?.[1] ?? null];
      }),
    );
  }
  const upperSnake = (flag: string): string => `SKILLS_SERVE_${flag.slice(2).toUpperCase().replaceAll('-', '_')}`;

  it.each(['serve', 'check', 'manifest'] as const)(
    '%s: every flag has its twin SKILLS_SERVE_<FLAG> (only --help, and manifest --check with its --json and --content-only, have none)',
    (command) => {
      const listed = twins(command);
      const without = Object.keys(listed).filter((flag) => listed[flag] === null);
      // manifest's --check names a saved file per run, and --json and --content-only only go with it: a variable left
      // set would turn every manifest into a check, or make a plain manifest a usage error.
      expect(without.sort()).toEqual(
        command === 'manifest' ? ['--check', '--content-only', '--help', '--json'] : ['--help'],
      );
      for (const [flag, env] of Object.entries(listed)) if (env !== null) expect(env, flag).toBe(upperSnake(flag));
      expect(Object.keys(listed)).toHaveLength({ serve: 30, check: 17, manifest: 13 }[command]);
    },
  );
});

describe('on/off environment twins', () => {
  it.each(['0', 'false', 'no', 'off', ''])('SKILLS_SERVE_STRICT=%j leaves --strict off', async (value) => {
    const dir = await trees.tree({ 's/SKILL.md': skillMd('s', 'Fine.'), 's/prod.env': 'X=1\n' });
    expect(cli(['check', dir], undefined, { SKILLS_SERVE_STRICT: value }).status).toBe(0);
  });

  it.each(['1', 'true', 'YES', 'on'])('SKILLS_SERVE_STRICT=%j turns --strict on', async (value) => {
    const dir = await trees.tree({ 's/SKILL.md': skillMd('s', 'Fine.'), 's/prod.env': 'X=1\n' });
    expect(cli(['check', dir], undefined, { SKILLS_SERVE_STRICT: value }).status).toBe(1);
  });

  it('refuses any other value with exit 2 and says which values work', () => {
    expect(cli(['check', SAMPLE_SKILLS], undefined, { SKILLS_SERVE_NO_WATCH: 'maybe' })).toEqual({
      status: 2,
      stdout: '',
      stderr: 'skills-serve: SKILLS_SERVE_NO_WATCH must be 1, true, yes, on, or 0, false, no, off (got "maybe")\n',
    });
  });
});

it('an empty --http-token (an unset variable) is a usage error, not an open server', () => {
  for (const run of [
    cli(['--http', '0', '--http-token', '', SAMPLE_SKILLS]),
    cli(['--http', '0', SAMPLE_SKILLS], undefined, { SKILLS_SERVE_HTTP_TOKEN: ' ' }),
  ]) {
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('--http-token must not be empty');
  }
});

it('an empty --auth-issuer (an unset variable) is a usage error, not a server without authorization', () => {
  for (const run of [
    cli(['--http', '0', '--auth-issuer', '', SAMPLE_SKILLS]),
    cli(['--http', '0', '--auth-issuer', ' , ', SAMPLE_SKILLS]),
    cli(['--http', '0', SAMPLE_SKILLS], undefined, { SKILLS_SERVE_AUTH_ISSUER: ' , ' }),
  ]) {
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('--auth-issuer must not be empty (an unset variable, as in --auth-issuer "$ISSUER"?)');
  }
});

it('empty introspection credentials are usage errors, not a server that cannot introspect', () => {
  const issuer = ['--http', '0', '--auth-issuer', 'http://127.0.0.1:1', SAMPLE_SKILLS];
  for (const [run, flag, variable] of [
    [cli([...issuer, '--auth-client-id', '', '--auth-client-secret', 'x']), '--auth-client-id', 'CLIENT_ID'],
    [
      cli([...issuer, '--auth-client-id', 'serve', '--auth-client-secret', ' ']),
      '--auth-client-secret',
      'CLIENT_SECRET',
    ],
    [
      cli([...issuer, '--auth-client-id', 'serve'], undefined, { SKILLS_SERVE_AUTH_CLIENT_SECRET: '' }),
      '--auth-client-secret',
      'CLIENT_SECRET',
    ],
  ] as const) {
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(`${flag} must not be empty (an unset variable, as in ${flag} "$${variable}"?)`);
  }
});

it('--auth-scopes without --auth-issuer is a usage error, as its siblings are (it would leave the server open)', () => {
  for (const run of [
    cli(['--http', '0', '--auth-scopes', 'skills:read', SAMPLE_SKILLS]),
    cli(['--http', '0', SAMPLE_SKILLS], undefined, { SKILLS_SERVE_AUTH_SCOPES: 'skills:read' }),
  ]) {
    expect(run).toEqual({
      status: 2,
      stdout: '',
      stderr: 'skills-serve: --auth-scopes needs --auth-issuer\n',
    });
  }
});

it('an issuer with credentials in it is refused as such (not as a bad URL)', () => {
  const run = cli(['--http', '0', '--auth-issuer', 'http://user:secret@127.0.0.1:9400', SAMPLE_SKILLS]);
  expect(run.status).toBe(2);
  expect(run.stderr).toContain(
    '--auth-issuer must not hold credentials (user:password@): an issuer identifier has none',
  );
});

describe('overlapping roots', () => {
  it('a folder listed twice is served once, with a duplicate-root warning', () => {
    const run = cli(['check', '--json', SAMPLE_SKILLS, SAMPLE_SKILLS]);
    const report = JSON.parse(run.stdout) as { skills: unknown[]; diagnostics: { rule: string; message: string }[] };
    expect(report.skills).toHaveLength(6);
    // sample-skills' data-pipeline bundles scripts/validate.py: an info note, once.
    expect(report.diagnostics.map((diagnostic) => diagnostic.rule)).toEqual(['duplicate-root', 'executable-content']);
    expect(run.status).toBe(0);
  });

  it('a root inside another is served, with a nested-root warning naming both', () => {
    const run = cli(['check', '--json', SAMPLE_SKILLS, path.join(SAMPLE_SKILLS, 'acme')]);
    const report = JSON.parse(run.stdout) as {
      skills: { uri: string }[];
      diagnostics: { rule: string; message: string }[];
    };
    expect(report.skills).toHaveLength(8);
    expect(report.diagnostics).toMatchObject([
      {
        rule: 'nested-root',
        message: `root lies inside root ${SAMPLE_SKILLS}; the skills in it are served twice, under two skill paths`,
      },
      { rule: 'executable-content' },
    ]);
  });
});

describe('manifest', () => {
  it('says on stderr when skills were left out of it', async () => {
    const dir = await trees.tree({
      good: { dir: true },
      'good/SKILL.md': skillMd('good', 'Good.'),
      'bad/SKILL.md': skillMd('wrong-name', 'Bad.'),
    });
    const run = cli(['manifest', dir]);
    expect(run.status).toBe(0);
    expect(run.stderr).toBe('skills-serve: 1 skill(s) left out of the manifest; run skills-serve check to see why\n');
  });

  it('--check exits 2 (not 1) when the saved manifest cannot be read, so CI can tell it from a difference', async () => {
    const dir = await trees.tempDir();
    writeFileSync(path.join(dir, 'bad.json'), '{"not":"a manifest"}');
    expect(cli(['manifest', '--check', path.join(dir, 'bad.json'), SAMPLE_SKILLS]).status).toBe(2);
    expect(cli(['manifest', '--check', path.join(dir, 'missing.json'), SAMPLE_SKILLS]).status).toBe(2);
  });
});

it('diagnostics found before a 2025-era host connects reach it as log messages once its handshake completes', async () => {
  const dir = await trees.tree({
    'good/SKILL.md': skillMd('good', 'Good.'),
    'bad/SKILL.md': skillMd('wrong-name', 'Bad.'),
  });
  const server = spawnWire({ args: ['--no-watch', dir] });
  try {
    await waitForEvent(server.stderr, 'index-built', { diagnostics: 1 });
    await server.handshake();
    const message = await server.waitFor((m) => m['method'] === 'notifications/message');
    expect(message['params']).toMatchObject({
      level: 'warning',
      logger: 'skills-serve',
      data: { severity: 'error', rule: 'name-mismatch', file: '<root 1>/bad/SKILL.md', line: 2, column: 1 },
    });
    expect(JSON.stringify(message)).not.toContain(dir);
  } finally {
    server.child.stdin?.end();
    await server.exited();
  }
});

describe('HTTP', () => {
  let server: HttpServer | undefined;
  afterEach(async () => {
    await server?.stop();
    server = undefined;
  });

  it('2025-era exchanges (stateless: no channel for updates) do not offer resources/subscribe; 2026-07-28 ones do', async () => {
    server = await startHttpServer(['--no-watch', SAMPLE_SKILLS]);
    const post = async (body: unknown) =>
      (
        await fetch(server!.url, {
          method: 'POST',
          body: JSON.stringify(body),
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        })
      ).text();
    const legacy = await post({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    });
    expect(legacy).toContain('"protocolVersion":"2025-11-25"');
    expect(legacy).not.toContain('"subscribe":true');
    const client = new Client({ name: 'modern', version: '1.0.0' }, eraClientOptions(ERAS[2]));
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    try {
      expect(client.getServerCapabilities()?.resources).toMatchObject({ subscribe: true, listChanged: true });
    } finally {
      await client.close();
    }
  });
});
