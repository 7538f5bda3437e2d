/**
 * Executable content flagged (docs/security.md, "Executable content"): the built CLI on a real directory whose files
 * carry real execute bits (chmod), shebangs and native magic numbers. Over real stdio each entry's
 * `_meta["dev.skills-serve/executables"]` is exact, and a warm start (digest cache present, every file but the
 * `SKILL.md`s trusted without being read: the `digestsTrusted` counter) flags the same files; `check` prints one info
 * line per flagged skill and passes `--strict`; `--withhold-executables` withholds them with a diagnostic each; over
 * real HTTP a `--http-tokens` entry with `"withholdExecutables": true` withholds them from that token only.
 *
 * A start trusts a cached digest only when the file was not changed within 2 s of being hashed (ctime included), so
 * the tree is made (and chmod-ed) once, up front, and the tests start once its files' ctimes are that old: a wait
 * computed from the files' own timestamps.
 */
import { chmodSync, promises as fsp, realpathSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { RACY_WINDOW_MS } from '../../src/index/record.js';
import { cli } from '../helpers/cli.js';
import { eventsOf, waitForEvent } from '../helpers/logs.js';
import { ANY_RESULT, connect, eraClientOptions, ERAS, startHttpServer } from '../helpers/server.js';
import { makeTempDir, makeTree, removeTree, skillMd } from '../helpers/tree.js';

/** An ELF header's first bytes (x86-64 executable), then padding. */
const ELF_BYTES = Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]), Buffer.alloc(56)]);
/** A 64-bit little-endian Mach-O header's first bytes. */
const MACH_O_BYTES = Buffer.concat([Buffer.from([0xcf, 0xfa, 0xed, 0xfe, 7, 0, 0, 1]), Buffer.alloc(24)]);
/** A Java class file (`0xcafebabe`, then minor 0 and major 52): not a fat Mach-O, not flagged. */
const JAVA_CLASS_BYTES = Buffer.from([0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 52, 0, 0]);
/** `MZ`, a DOS header pointing at `PE\0\0` at 0x80. */
function peBytes(): Buffer {
  const bytes = Buffer.alloc(0x100);
  bytes.write('MZ', 0, 'latin1');
  bytes.writeUInt32LE(0x80, 0x3c);
  bytes.write('PE\0\0', 0x80, 'latin1');
  return bytes;
}
/** A PNG's signature and bytes full of NUL: binary, not executable. */
const PNG_BYTES = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(64)]);

const TREE = {
  'tool/SKILL.md': skillMd('tool', 'Runs a bundled tool.'),
  'tool/scripts/run.py': '#!/usr/bin/env python3\nprint("hi")\n',
  'tool/scripts/README.md': '# How to run\n\nRun `scripts/run.py`.\n',
  'tool/scripts/Guide.MD': '# Guide\n',
  'tool/scripts/usage.markdown': '# Usage\n',
  'tool/scripts/helper.py': 'def helper():\n    return 1\n',
  'tool/build.sh': 'make all\n',
  'tool/bin/helper': ELF_BYTES,
  'tool/lib/native.dylib': MACH_O_BYTES,
  'tool/win.exe': peBytes(),
  'tool/Main.class': JAVA_CLASS_BYTES,
  'tool/notes.md': 'Run scripts/run.py with #!/usr/bin/env python3, or ./build.sh.\n',
  'plain/SKILL.md': skillMd('plain', 'Only documents.'),
  'plain/references/shell.md': 'Example:\n\n```sh\n#!/bin/sh\necho hi\n```\n',
  'plain/image.png': PNG_BYTES,
  'plain/hash.txt': '#!not a path\n',
  'loose/SKILL.md': skillMd('loose', 'Copied from a FAT stick, where every file has an execute bit.'),
  'loose/data.txt': 'plain data\n',
} as const;
/** Files given an execute bit. */
const EXECUTABLE = ['tool/scripts/run.py', 'tool/build.sh', 'loose/SKILL.md', 'loose/data.txt'];

const TOOL_EXECUTABLES = {
  'bin/helper': ['elf'],
  'build.sh': ['execute-bit'],
  'lib/native.dylib': ['mach-o'],
  'scripts/helper.py': ['scripts'],
  'scripts/run.py': ['scripts', 'execute-bit', 'shebang'],
  'win.exe': ['pe'],
};
/** How `check` and the diagnostics name them. */
const TOOL_REASONS =
  'bin/helper (elf), build.sh (execute-bit), lib/native.dylib (mach-o), scripts/helper.py (scripts), scripts/run.py (scripts, execute-bit, shebang), win.exe (pe)';
const FILES = Object.keys(TREE).length;

let root: string;
let cacheDir: string;

beforeAll(async () => {
  root = realpathSync(await makeTree(TREE));
  cacheDir = await makeTempDir();
  for (const rel of EXECUTABLE) chmodSync(path.join(root, rel), 0o755);
  // Until every file's ctime is older than the racy window: the only wait, computed from the files, not guessed.
  let newestMs = 0;
  for (const rel of Object.keys(TREE)) {
    const stat = statSync(path.join(root, rel));
    newestMs = Math.max(newestMs, stat.ctimeMs, stat.mtimeMs);
  }
  const dueMs = newestMs + RACY_WINDOW_MS + 50;
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, dueMs - Date.now())));
}, 30_000);

afterAll(async () => {
  await removeTree(root);
  await removeTree(cacheDir);
});

/** Each listed skill's URI with its `_meta` (absent: `undefined`). */
type Listed = Record<string, unknown>;

async function startStdio(flags: readonly string[] = []): Promise<Awaited<ReturnType<typeof connect>>> {
  return connect([...flags, root], undefined, {
    env: { SKILLS_SERVE_LOG_LEVEL: 'debug', SKILLS_SERVE_CACHE_DIR: cacheDir },
  });
}

function metaByUri(skills: readonly { uri: string; _meta?: unknown }[]): Listed {
  return Object.fromEntries(skills.map((skill) => [skill.uri, skill._meta]));
}

const EXPECTED_META: Listed = {
  'skill://loose/SKILL.md': undefined,
  'skill://plain/SKILL.md': undefined,
  'skill://tool/SKILL.md': { 'dev.skills-serve/executables': TOOL_EXECUTABLES },
};

describe('executable content over stdio', () => {
  it('flags each file with its reasons; a warm start flags the same files without reading them', async () => {
    const cold = await startStdio();
    try {
      const built = await waitForEvent(() => cold.stderr(), 'index-built');
      expect(built['digestsStored']).toBeUndefined();
      expect(metaByUri(await cold.list())).toEqual(EXPECTED_META);
      await waitForEvent(() => cold.stderr(), 'digest-cache-written');
    } finally {
      await cold.close();
    }
    const warm = await startStdio();
    try {
      const built = await waitForEvent(() => warm.stderr(), 'index-built');
      // Every file was trusted, not read (the SKILL.mds too: their parsed frontmatter is kept beside the digests).
      expect(built['digestsStored']).toBe(FILES);
      expect(built['digestsTrusted']).toBe(FILES);
      expect(metaByUri(await warm.list())).toEqual(EXPECTED_META);
    } finally {
      await warm.close();
    }
  });

  it('--withhold-executables serves the others and names each withheld skill', async () => {
    const server = await startStdio(['--withhold-executables']);
    try {
      expect(Object.keys(metaByUri(await server.list()))).toEqual(['skill://loose/SKILL.md', 'skill://plain/SKILL.md']);
      const got = server.client.request({ method: 'skills/get', params: { uri: 'skill://tool/SKILL.md' } }, ANY_RESULT);
      await expect(got).rejects.toMatchObject({ code: -32602 });
      const [withheld, ...more] = eventsOf(server.stderr(), 'diagnostic', { rule: 'executables-withheld' });
      expect(more).toEqual([]);
      expect(withheld?.['severity']).toBe('info');
      expect(withheld?.['file']).toBe(path.join(root, 'tool', 'SKILL.md'));
      expect(withheld?.['msg']).toBe(
        `${path.join(root, 'tool', 'SKILL.md')}: skill://tool/SKILL.md is withheld (--withhold-executables): it bundles bin/helper (elf), build.sh (execute-bit), lib/native.dylib (mach-o), scripts/helper.py (scripts), scripts/run.py (scripts, execute-bit, shebang), win.exe (pe) [executables-withheld]; fix: to serve it, drop --withhold-executables, or move its executable files out of the skill`,
      );
    } finally {
      await server.close();
    }
  });

  it('--withhold-executables with --strict still serves: info never fails', async () => {
    const server = await startStdio(['--withhold-executables', '--strict']);
    try {
      expect((await server.list()).map((skill) => skill.uri)).toEqual([
        'skill://loose/SKILL.md',
        'skill://plain/SKILL.md',
      ]);
    } finally {
      await server.close();
    }
  });
});

describe('check lists executable content', () => {
  it('one info block per flagged skill, a note in the summary, and --strict passes', () => {
    const name = path.basename(root);
    const run = cli(['check', '--strict', name], path.dirname(root), { SKILLS_SERVE_CACHE_DIR: cacheDir });
    expect(run.stdout.replaceAll(name, 'skills')).toBe(
      [
        'ok      skill://loose/SKILL.md  2 files, 128 bytes',
        'ok      skill://plain/SKILL.md  4 files, 194 bytes',
        'ok      skill://tool/SKILL.md   12 files, 622 bytes',
        '',
        `info    skills/tool/SKILL.md: skill://tool/SKILL.md bundles 6 executable files: bin/helper (elf), build.sh (execute-bit), lib/native.dylib (mach-o), scripts/helper.py (scripts), scripts/run.py (scripts, execute-bit, shebang), win.exe (pe) [executable-content]`,
        '        fix: review them before serving; an operator can withhold such skills (--withhold-executables, or "withholdExecutables" in a --http-tokens entry)',
        '',
        '3 skills served, 0 left out, 0 warnings, 1 note',
        '',
      ].join('\n'),
    );
    expect(run.status).toBe(0);
    const json = cli(['check', '--json', root], undefined, { SKILLS_SERVE_CACHE_DIR: cacheDir });
    const report = JSON.parse(json.stdout) as { summary: unknown; diagnostics: { rule: string; severity: string }[] };
    expect(report.summary).toEqual({ served: 3, leftOut: 0, warnings: 0, info: 1 });
    expect(report.diagnostics.map(({ rule, severity }) => ({ rule, severity }))).toEqual([
      { rule: 'executable-content', severity: 'info' },
    ]);
  });
});

describe.each([ERAS[1], ERAS[2]])('a --http-tokens view withholding executables, era $label', (era) => {
  const WITHHELD = 'withheld-token-0123456789';
  const EVERYTHING = 'everything-token-0123456789';

  it('withholds the flagged skill from that token only, as if it did not exist', async () => {
    const dir = await makeTempDir();
    const file = path.join(dir, 'tokens.json');
    writeFileSync(
      file,
      JSON.stringify({
        tokens: [
          { name: 'reviewed', token: WITHHELD, prefixes: ['*'], withholdExecutables: true },
          { name: 'all', token: EVERYTHING, prefixes: ['*'] },
        ],
      }),
    );
    const server = await startHttpServer(['--http-tokens', file, root], { SKILLS_SERVE_CACHE_DIR: cacheDir });
    const clientFor = async (token: string): Promise<{ client: Client; skills: SkillsClient }> => {
      const client = new Client({ name: 'executables-test', version: '1' }, eraClientOptions(era));
      await client.connect(
        new StreamableHTTPClientTransport(new URL(server.url), {
          requestInit: { headers: { authorization: `Bearer ${token}` } },
        }),
      );
      return { client, skills: new SkillsClient(client) };
    };
    const reviewed = await clientFor(WITHHELD);
    const all = await clientFor(EVERYTHING);
    try {
      expect(metaByUri((await reviewed.skills.list()).skills)).toEqual({
        'skill://loose/SKILL.md': undefined,
        'skill://plain/SKILL.md': undefined,
      });
      expect(metaByUri((await all.skills.list()).skills)).toEqual(EXPECTED_META);
      const codeOf = async (request: Promise<unknown>): Promise<unknown> =>
        request.then(
          () => 'answered',
          (error: { code: number }) => error.code,
        );
      const request = (client: Client, method: string, uri: string): Promise<unknown> =>
        client.request({ method, params: { uri } }, ANY_RESULT);
      expect(await codeOf(request(reviewed.client, 'skills/get', 'skill://tool/SKILL.md'))).toBe(-32602);
      expect(await codeOf(reviewed.client.readResource({ uri: 'skill://tool/scripts/run.py' }))).toBe(-32602);
      expect(await codeOf(request(reviewed.client, 'resources/directory/read', 'skill://tool/scripts'))).toBe(-32602);
      expect(await codeOf(all.client.readResource({ uri: 'skill://tool/scripts/run.py' }))).toBe('answered');
      const listed = (await reviewed.client.request({ method: 'resources/list', params: {} }, ANY_RESULT)) as {
        resources: { uri: string }[];
      };
      expect(listed.resources.filter((resource) => resource.uri.startsWith('skill://tool'))).toEqual([]);
      // Its clients hear why, on the response stream of a first skills/list page (a 2025-era request).
      const response = await fetch(server.url, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${WITHHELD}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-11-25',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'skills/list', params: {} }),
      });
      const heard = (await response.text())
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => JSON.parse(line.slice(6)) as { method?: string; params?: { level: string; data: unknown } })
        .filter((message) => message.method === 'notifications/message')
        .map((message) => message.params);
      expect(heard).toEqual([
        {
          level: 'info',
          logger: 'skills-serve',
          data: {
            severity: 'info',
            rule: 'executables-withheld',
            file: '<root 1>/tool/SKILL.md',
            message: `skill://tool/SKILL.md is withheld ("withholdExecutables" of token reviewed): it bundles ${TOOL_REASONS}`,
            hint: 'to serve it, drop "withholdExecutables" of token reviewed, or move its executable files out of the skill',
          },
        },
      ]);
    } finally {
      await reviewed.client.close();
      await all.client.close();
      await server.stop();
      await fsp.rm(dir, { recursive: true, force: true });
    }
  });
});
