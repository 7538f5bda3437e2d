/**
 * The test OpenID provider of docs/http.md (`scripts/test-oidc-provider.mjs`) as a person runs it: `--help`, a bad
 * option or port, a port in use and an issuer that does not answer each end with one line on stderr and an exit
 * code, never a stack trace.
 */
import { spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import path from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { REPO } from '../helpers/paths.js';

const SCRIPT = path.join(REPO, 'scripts', 'test-oidc-provider.mjs');

/** Runs the script to completion; stderr without oidc-provider's own "WARNING" lines (the Node version it wants). */
function provider(args: readonly string[]): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync(process.execPath, [SCRIPT, ...args], { cwd: REPO, encoding: 'utf8', timeout: 20_000 });
  if (run.error !== undefined) throw run.error;
  const stderr = run.stderr
    .split('\n')
    .filter((line) => !line.startsWith('oidc-provider WARNING'))
    .join('\n');
  return { status: run.status, stdout: run.stdout, stderr };
}

const USAGE_FIRST_LINE =
  'usage: node scripts/test-oidc-provider.mjs [--port 9400] [--resource http://127.0.0.1:8080/mcp] [--groups a,b]';

let busy: Server | undefined;
afterEach(() => busy?.close());

describe('scripts/test-oidc-provider.mjs', () => {
  it('--help prints the usage on stdout and exits 0', () => {
    const run = provider(['--help']);
    expect(run.status).toBe(0);
    expect(run.stdout.split('\n')[0]).toBe(USAGE_FIRST_LINE);
  });

  it.each([
    [['--port', 'abc'], '--port takes a port number, 0 to 65535 (got "abc")'],
    [['--port', '70000'], '--port takes a port number, 0 to 65535 (got "70000")'],
    [['--token', 'http://127.0.0.1:1,skills-agent'], '--token takes <issuer>,<client_id>,<client_secret>'],
  ])('%j is a usage error: exit 2, the reason, then the usage', (args, reason) => {
    const run = provider(args);
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr.split('\n').slice(0, 2)).toEqual([reason, USAGE_FIRST_LINE]);
  });

  it('a port in use is one line and exit 1', async () => {
    const server = createServer();
    busy = server;
    const port = await new Promise<number>((resolve) =>
      server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)),
    );
    const run = provider(['--port', String(port)]);
    expect(run).toEqual({
      status: 1,
      stdout: '',
      stderr: `cannot serve the OpenID provider on 127.0.0.1:${port}: the port is in use\n`,
    });
  });
});
