/**
 * What each way of running loads (`dist/modes.json`, written by `npm run build` from esbuild's metafile): a stdio
 * server of folders loads no HTTP, authorization, metrics or feed serving code and, of the git layer, only what
 * parses root arguments; the rest comes in with the mode that uses it.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

import { beforeAll, describe, expect, it } from 'vitest';

import { DIST, requireDist } from '../helpers/dist.js';

type Modes = Record<string, { bytes: number; chunks: string[]; inputs: string[] }>;

let modes: Modes;
beforeAll(() => {
  requireDist();
  modes = JSON.parse(readFileSync(path.join(DIST, 'modes.json'), 'utf8')) as Modes;
});

/** Inputs only HTTP serving uses: the transport, the gate and its authorizers, metrics, the feed's routes. */
const HTTP_ONLY =
  /^(?:src\/transports\/(?:http|http-tokens|metrics|feed)\.ts|src\/transports\/auth\/|node_modules\/(?:prom-client|jose|hono|@hono\/|@modelcontextprotocol\/node|@opentelemetry\/))/u;

const gitInputs = (mode: string): string[] =>
  (modes[mode]?.inputs ?? []).filter((input) => input.startsWith('src/roots/git/'));

describe('what each mode loads', () => {
  it('stdio loads nothing only HTTP uses', () => {
    expect(modes['stdio']?.inputs.filter((input) => HTTP_ONLY.test(input))).toEqual([]);
  });

  it('stdio loads, of the git layer, only what parses root arguments', () => {
    expect(gitInputs('stdio')).toEqual([
      'src/roots/git/kind.ts',
      'src/roots/git/settings.ts',
      'src/roots/git/spec.ts',
      'src/roots/git/url.ts',
    ]);
  });

  it('a git root loads the git layer, --http loads HTTP, the commands neither', () => {
    expect(gitInputs('stdio, git root')).toContain('src/roots/git/root.ts');
    expect(gitInputs('stdio, git root')).toContain('src/roots/git/exec.ts');
    const http = modes['http']?.inputs ?? [];
    for (const input of ['src/transports/http.ts', 'src/transports/metrics.ts', 'node_modules/prom-client'])
      expect(http).toContain(input);
    for (const command of ['check', 'manifest']) {
      expect(modes[command]?.inputs.filter((input) => HTTP_ONLY.test(input))).toEqual([]);
      expect(gitInputs(command)).toEqual(gitInputs('stdio'));
    }
  });

  it('every mode loads the entry and the command line, and stdio loads the least', () => {
    const sizes = Object.fromEntries(Object.entries(modes).map(([mode, { bytes }]) => [mode, bytes]));
    expect(Object.keys(sizes).sort()).toEqual(['check', 'http', 'manifest', 'stdio', 'stdio, git root']);
    for (const [mode, bytes] of Object.entries(sizes)) expect(bytes, mode).toBeGreaterThanOrEqual(sizes['stdio'] ?? 0);
    for (const { chunks } of Object.values(modes)) expect(chunks).toContain('cli.js');
  });
});
