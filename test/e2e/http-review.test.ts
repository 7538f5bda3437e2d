/**
 * `--http` configurations that cannot be what was meant (`transports/http-review.ts`), over real processes: a view
 * prefix under which no skill is served, at start and after a reload of the tokens file, and `--cache-scope public`
 * with per-token views; each a warning, and with `--strict` a refusal (exit 2).
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { SAMPLE_SKILLS } from '../helpers/paths.js';
import { startHttpServer } from '../helpers/server.js';
import { makeTempDir, removeTree } from '../helpers/tree.js';
import { SERVER_DEFAULT_LOG_LEVEL, spawnWire, stopAll } from '../helpers/wire.js';

const BILLING = 'billing-token-0123456789';
const SUPPORT = 'support-token-0123456789';
const EVERYONE = 'everyone-token-012345678';

let dir: string | undefined;
afterEach(async () => {
  await stopAll();
  if (dir !== undefined) await removeTree(dir);
  dir = undefined;
});

async function tokensFile(
  entries: ReadonlyArray<{ name: string; token: string; prefixes: string[] }>,
): Promise<string> {
  dir = await makeTempDir();
  const file = path.join(dir, 'tokens.json');
  await fsp.writeFile(file, JSON.stringify({ tokens: entries }));
  return file;
}

const MISTYPED = [
  { name: 'billing', token: BILLING, prefixes: ['acme/biling'] },
  { name: 'support', token: SUPPORT, prefixes: ['acme/support', 'shared/tools'] },
  { name: 'everyone', token: EVERYONE, prefixes: ['*'] },
];

describe('view prefixes that match no served skill', () => {
  it('are each named with the closest served path, the tokens never', async () => {
    const file = await tokensFile(MISTYPED);
    const server = await startHttpServer(['--http-tokens', file, SAMPLE_SKILLS]);
    const found = await server.wire.waitForLog((line) => line['event'] === 'view-prefix-unmatched');
    await server.wire.waitForLog((line) => line['event'] === 'view-prefix-unmatched' && line['view'] === 'support');
    const lines = server.wire.logs().filter((line) => line['event'] === 'view-prefix-unmatched');
    expect(lines.map(({ view, prefix, nearest, msg, level }) => ({ view, prefix, nearest, msg, level }))).toEqual([
      {
        level: 40,
        view: 'billing',
        prefix: 'acme/biling',
        nearest: 'acme/billing',
        msg: `--http-tokens ${file}: "billing" has the prefix "acme/biling", under which no skill is served (did you mean "acme/billing"?): its clients see nothing there`,
      },
      {
        level: 40,
        view: 'support',
        prefix: 'shared/tools',
        nearest: undefined,
        msg: `--http-tokens ${file}: "support" has the prefix "shared/tools", under which no skill is served: its clients see nothing there`,
      },
    ]);
    expect(found['view']).toBe('billing');
    expect(server.stderr()).not.toContain(BILLING);
    expect(server.stderr()).not.toContain(SUPPORT);
    expect(await server.stop()).toBe(0);
  });

  it('are reviewed again when the tokens file is reloaded', async () => {
    const file = await tokensFile([{ name: 'everyone', token: EVERYONE, prefixes: ['*'] }]);
    const server = await startHttpServer(['--http-tokens', file, SAMPLE_SKILLS]);
    expect(server.wire.logs().filter((line) => line['event'] === 'view-prefix-unmatched')).toEqual([]);
    await fsp.writeFile(
      file,
      JSON.stringify({ tokens: [{ name: 'pdf', token: BILLING, prefixes: ['pdf-sumaries'] }] }),
    );
    const line = await server.wire.waitForLog((log) => log['event'] === 'view-prefix-unmatched');
    expect([line['view'], line['prefix'], line['nearest']]).toEqual(['pdf', 'pdf-sumaries', 'pdf-summaries']);
    expect(await server.stop()).toBe(0);
  });

  it('with --strict, refuse to serve: exit 2 after naming each', async () => {
    const file = await tokensFile(MISTYPED);
    const server = spawnWire({
      args: ['--http', '0', '--strict', '--http-tokens', file, SAMPLE_SKILLS],
      env: SERVER_DEFAULT_LOG_LEVEL,
    });
    expect(await server.exited()).toEqual({ code: 2, signal: null });
    const events = server
      .logs()
      .filter((line) => ['view-prefix-unmatched', 'strict-failed'].includes(String(line['event'])))
      .map((line) => [line['event'], line['prefix'] ?? line['msg']]);
    expect(events).toEqual([
      ['view-prefix-unmatched', 'acme/biling'],
      ['view-prefix-unmatched', 'shared/tools'],
      ['strict-failed', '--strict: 2 view prefix(es) match no served skill (listed above); not serving'],
    ]);
  });
});

describe('--cache-scope public with per-token views', () => {
  const EXPECTED =
    "--cache-scope public with --http-tokens: each token sees its own skills, and a shared cache told the results are public may give one team's listing to another; use --cache-scope private (the default)";

  it('is warned about at start', async () => {
    const file = await tokensFile([{ name: 'everyone', token: EVERYONE, prefixes: ['*'] }]);
    const server = await startHttpServer(['--http-tokens', file, '--cache-scope', 'public', SAMPLE_SKILLS]);
    const suspect = server.wire.logs().filter((line) => line['event'] === 'config-suspect');
    expect(suspect.map(({ option, msg, level }) => ({ option, msg, level }))).toEqual([
      { option: '--cache-scope', msg: EXPECTED, level: 40 },
    ]);
    expect(await server.stop()).toBe(0);
  });

  it('with --strict, refuses to start: exit 2 with the reason', async () => {
    const file = await tokensFile([{ name: 'everyone', token: EVERYONE, prefixes: ['*'] }]);
    const server = spawnWire({
      args: ['--http', '0', '--strict', '--cache-scope', 'public', '--http-tokens', file, SAMPLE_SKILLS],
      env: SERVER_DEFAULT_LOG_LEVEL,
    });
    expect(await server.exited()).toEqual({ code: 2, signal: null });
    const failed = server.logs().filter((line) => line['event'] === 'start-failed');
    expect(failed.map((line) => line['msg'])).toEqual([`--strict: ${EXPECTED}`]);
  });

  it('is fine with one --http-token: every client sees the same', async () => {
    const server = await startHttpServer(['--http-token', EVERYONE, '--cache-scope', 'public', SAMPLE_SKILLS]);
    expect(server.wire.logs().filter((line) => line['event'] === 'config-suspect')).toEqual([]);
    expect(await server.stop()).toBe(0);
  });
});
