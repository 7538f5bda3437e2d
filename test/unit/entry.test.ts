/**
 * One skill's record and entry (SEP-2640 "The entry", "Limits per skill"): `readFrontmatter` reads and checks the
 * frontmatter, `buildRecord` lists every file of the skill's directory node once and serializes the entry, and
 * `problemsDiagnostic` turns every rule a skill breaks into one diagnostic. Entries are JSON strings now: each check
 * parses `record.json` and compares it with the exact entry expected (digests computed here, with node:crypto, and by
 * the SDK's `skillEntry()` on the same bytes).
 */
import { createHash } from 'node:crypto';
import path from 'node:path';

import { SKILL_LIMITS, skillEntry } from '@modelcontextprotocol/server/ext/skills';
import { afterEach, describe, expect, it } from 'vitest';

import { buildSnapshot } from '../../src/index/build.js';
import { buildRecord, entryOf, problemsDiagnostic } from '../../src/index/entry.js';
import { readFrontmatter } from '../../src/index/frontmatter.js';
import { type ManifestEntry, readManifest } from '../../src/index/manifest.js';
import { makeKey } from '../../src/index/record.js';
import { type Diagnostic, DirNode, FileNode, type SkillRecord } from '../../src/index/types.js';
import { sha256 } from '../helpers/disk.js';
import { skillMd as skillMdOf, tempTrees, type TreeEntry } from '../helpers/tree.js';

const SKILL_DIR = '/srv/skills/my-skill';
const MANIFEST_PATH = `${SKILL_DIR}/SKILL.md`;
const md = (...lines: string[]): string => `${lines.join('\n')}\n`;
const VALID = md('---', 'name: my-skill', 'description: Does things.', '---', '# Body');
const MAX_FILES = 512;
const MAX_BYTES = 16 * 1024 * 1024;

const encode = (text: string): Uint8Array => new TextEncoder().encode(text);

/** A file: its bytes, or only a size (for limits: the bytes are never read, the node just says how many there are). */
type FileSpec = Uint8Array | { readonly size: number };

/**
 * A file node as the walk makes one: digest of `bytes` (or of nothing, for a size-only spec), the size, an identity.
 */
function fileNode(name: string, spec: FileSpec): FileNode {
  const bytes = spec instanceof Uint8Array ? spec : new Uint8Array();
  const size = spec instanceof Uint8Array ? spec.byteLength : spec.size;
  const digest = createHash('sha256').update(bytes).digest();
  return new FileNode(
    name,
    size,
    makeKey(digest, size, { size, mtimeMs: 1_700_000_000_000, ctimeMs: 1_700_000_000_000, ino: 1, dev: 1 }, false),
    undefined,
  );
}

/** A directory node from `/`-separated relative paths, children sorted by name as the walk sorts them. */
function dirNode(name: string, files: Readonly<Record<string, FileSpec>>): DirNode {
  const direct: (DirNode | FileNode)[] = [];
  const below = new Map<string, Record<string, FileSpec>>();
  for (const [rel, spec] of Object.entries(files)) {
    const slash = rel.indexOf('/');
    if (slash === -1) {
      direct.push(fileNode(rel, spec));
      continue;
    }
    const head = rel.slice(0, slash);
    const group = below.get(head) ?? {};
    group[rel.slice(slash + 1)] = spec;
    below.set(head, group);
  }
  for (const [head, group] of below) direct.push(dirNode(head, group));
  direct.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return new DirNode(name, direct, SKILL_DIR, undefined);
}

async function manifestOf(segments: readonly string[], manifest: Uint8Array): Promise<ManifestEntry> {
  const { read } = await readManifest(segments, manifest);
  if ('problems' in read) throw new Error(`expected valid frontmatter, got ${JSON.stringify(read.problems)}`);
  return read;
}

/** Builds the record of a skill holding `SKILL.md` (`manifest`) and `files`. */
async function recordOf(
  manifest: string | Uint8Array,
  files: Readonly<Record<string, FileSpec>> = {},
  segments: readonly string[] = ['my-skill'],
): Promise<SkillRecord | Diagnostic> {
  const bytes = typeof manifest === 'string' ? encode(manifest) : manifest;
  return buildRecord({
    segments,
    node: dirNode(segments.at(-1) as string, { 'SKILL.md': bytes, ...files }),
    dirReal: SKILL_DIR,
    rootIndex: 0,
    rel: segments.join('/'),
    manifestPath: MANIFEST_PATH,
    manifest: await manifestOf(segments, bytes),
  });
}

function expectRecord(result: SkillRecord | Diagnostic): SkillRecord {
  if ('severity' in result) throw new Error(`expected a record, got ${JSON.stringify(result)}`);
  return result;
}

/** The one diagnostic of a `SKILL.md` whose frontmatter breaks a rule. */
async function frontmatterDiagnostic(manifest: string | Uint8Array): Promise<Diagnostic> {
  const read = await readFrontmatter(['my-skill'], typeof manifest === 'string' ? encode(manifest) : manifest);
  if (!('problems' in read)) throw new Error(`expected problems, got ${JSON.stringify(read.frontmatter)}`);
  return problemsDiagnostic(MANIFEST_PATH, read.problems);
}

describe('buildRecord: valid skills', () => {
  it('serializes the entry once: every file once with digest and size, sorted by URI, exactly as the SDK builds it', async () => {
    const segments = ['acme', 'my-skill'];
    const files: Record<string, Uint8Array> = {
      '~tilde.txt': new Uint8Array([1]),
      'references/GUIDE.md': encode('# Guide\n'),
      'Assets/logo.png': new Uint8Array([0x89, 0x50, 0x4e, 0x47]),
      'café.md': new Uint8Array([]),
      'a b.md': encode('x'),
      'nested/SKILL.md': encode(md('---', 'name: nested', 'description: n', '---')),
    };
    const node = dirNode('my-skill', { 'SKILL.md': encode(VALID), ...files });
    const record = expectRecord(
      buildRecord({
        segments,
        node,
        dirReal: SKILL_DIR,
        rootIndex: 2,
        rel: 'acme/my-skill',
        manifestPath: MANIFEST_PATH,
        manifest: await manifestOf(segments, encode(VALID)),
      }),
    );
    const row = (uri: string, bytes: Uint8Array | string): { uri: string; digest: string; size: number } => ({
      uri,
      digest: sha256(bytes),
      size: typeof bytes === 'string' ? Buffer.byteLength(bytes) : bytes.byteLength,
    });
    const expected = {
      uri: 'skill://acme/my-skill/SKILL.md',
      frontmatter: { name: 'my-skill', description: 'Does things.' },
      resources: [
        row('skill://acme/my-skill/Assets/logo.png', files['Assets/logo.png'] as Uint8Array),
        row('skill://acme/my-skill/SKILL.md', VALID),
        row('skill://acme/my-skill/a%20b.md', 'x'),
        {
          uri: 'skill://acme/my-skill/caf%C3%A9.md',
          digest: 'sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
          size: 0,
        },
        row('skill://acme/my-skill/nested/SKILL.md', files['nested/SKILL.md'] as Uint8Array),
        row('skill://acme/my-skill/references/GUIDE.md', '# Guide\n'),
        row('skill://acme/my-skill/~tilde.txt', new Uint8Array([1])),
      ],
    };
    // record.json parses to exactly the expected entry, keys in wire order, and is exactly its serialization.
    expect(JSON.parse(record.json)).toStrictEqual(expected);
    expect(entryOf(record)).toStrictEqual(expected);
    expect(record.json).toBe(JSON.stringify(expected));
    expect(Object.keys(entryOf(record).resources[0] ?? {})).toEqual(['uri', 'digest', 'size']);
    // The SDK builds the same entry from the same bytes.
    const sdk = await skillEntry('acme/my-skill', { 'SKILL.md': VALID, ...files });
    expect(JSON.parse(record.json)).toStrictEqual(JSON.parse(JSON.stringify(sdk)));
    expect({
      uri: record.uri,
      rootUri: record.rootUri,
      segments: record.segments,
      name: record.name,
      description: record.description,
      dirReal: record.dirReal,
      rootIndex: record.rootIndex,
      rel: record.rel,
      manifestSize: record.manifestSize,
      fileCount: record.fileCount,
      totalBytes: record.totalBytes,
      headings: record.headings,
      modelInvocable: record.modelInvocable,
      userInvocable: record.userInvocable,
    }).toStrictEqual({
      uri: 'skill://acme/my-skill/SKILL.md',
      rootUri: 'skill://acme/my-skill',
      segments: ['acme', 'my-skill'],
      name: 'my-skill',
      description: 'Does things.',
      dirReal: SKILL_DIR,
      rootIndex: 2,
      rel: 'acme/my-skill',
      manifestSize: Buffer.byteLength(VALID),
      fileCount: 7,
      totalBytes: expected.resources.reduce((sum, resource) => sum + resource.size, 0),
      headings: 'Body',
      modelInvocable: true,
      userInvocable: true,
    });
    expect(record.node).toBe(node);
  });

  it('keeps nested frontmatter values (maps, lists) in the entry JSON', async () => {
    const record = expectRecord(
      await recordOf(md('---', 'name: my-skill', 'description: d', 'metadata:', '  k: v', 'tags: [a]', '---')),
    );
    expect(entryOf(record).frontmatter).toStrictEqual({
      name: 'my-skill',
      description: 'd',
      metadata: { k: 'v' },
      tags: ['a'],
    });
  });

  it.each([
    [
      '"|" keeps the final newline',
      ['description: |', '  Line one.', '  Line two.'],
      { description: 'Line one.\nLine two.\n' },
    ],
    ['"|-" strips it', ['description: |-', '  x'], { description: 'x' }],
    ['">" folds lines', ['description: >', '  a', '  b'], { description: 'a b\n' }],
    ['decimal int', ['description: d', 'version: 012'], { description: 'd', version: 12 }],
    ['octal and hex ints', ['description: d', 'o: 0o14', 'h: 0x1F'], { description: 'd', o: 12, h: 31 }],
    ['floats', ['description: d', 'f: 1.5', 'e: 1e3'], { description: 'd', f: 1.5, e: 1000 }],
    [
      'quoted number stays a string',
      ['description: d', 'version: "1.0"', "v: '012'"],
      { description: 'd', version: '1.0', v: '012' },
    ],
    ['no YAML 1.1 sexagesimal', ['description: d', 'time: 1:30'], { description: 'd', time: '1:30' }],
    [
      'no YAML 1.1 booleans',
      ['description: d', 'a: yes', 'b: on', 'c: True'],
      { description: 'd', a: 'yes', b: 'on', c: true },
    ],
    ['dates stay strings', ['description: d', 'date: 2024-01-01'], { description: 'd', date: '2024-01-01' }],
    ['nulls', ['description: d', 'a: ~', 'b:', 'c: null'], { description: 'd', a: null, b: null, c: null }],
    [
      'unknown fields pass through',
      ['description: d', 'argument-hint: <file>', 'user-invocable: false', 'allowed-tools: [Read, "Bash(git:*)"]'],
      {
        description: 'd',
        'argument-hint': '<file>',
        'user-invocable': false,
        'allowed-tools': ['Read', 'Bash(git:*)'],
      },
    ],
    [
      'metadata of strings',
      ['description: d', 'metadata:', '  author: acme', '  version: "2"'],
      { description: 'd', metadata: { author: 'acme', version: '2' } },
    ],
  ])('frontmatter: %s', async (_label, lines, expected) => {
    const record = expectRecord(await recordOf(md('---', 'name: my-skill', ...lines, '---', 'body')));
    expect(entryOf(record).frontmatter).toStrictEqual({ name: 'my-skill', ...expected });
  });

  it.each([
    ['BOM', `\uFEFF${VALID}`],
    ['CRLF', VALID.replaceAll('\n', '\r\n')],
    ['BOM + CRLF', `\uFEFF${VALID.replaceAll('\n', '\r\n')}`],
    ['no body, no final newline', '---\nname: my-skill\ndescription: Does things.\n---'],
  ])('accepts %s', async (_label, manifest) => {
    const record = expectRecord(await recordOf(manifest));
    expect(entryOf(record).frontmatter).toStrictEqual({ name: 'my-skill', description: 'Does things.' });
    expect(entryOf(record).resources).toStrictEqual([
      { uri: 'skill://my-skill/SKILL.md', digest: sha256(manifest), size: Buffer.byteLength(manifest) },
    ]);
  });

  it(`accepts exactly ${MAX_FILES} files and exactly 16 MiB`, async () => {
    expect(SKILL_LIMITS).toEqual({ files: MAX_FILES, bytes: MAX_BYTES });
    const files: Record<string, FileSpec> = {};
    for (let index = 1; index < MAX_FILES - 1; index++) files[`f${index}`] = new Uint8Array([]);
    files['big.bin'] = { size: MAX_BYTES - Buffer.byteLength(VALID) };
    const record = expectRecord(await recordOf(VALID, files));
    expect({
      resources: entryOf(record).resources.length,
      fileCount: record.fileCount,
      totalBytes: record.totalBytes,
    }).toEqual({
      resources: MAX_FILES,
      fileCount: MAX_FILES,
      totalBytes: MAX_BYTES,
    });
  });
});

describe('readFrontmatter + problemsDiagnostic: invalid frontmatter gives exactly one diagnostic', () => {
  const longDescription = md('---', 'name: my-skill', '# comment', 'description: ' + 'x'.repeat(1025), '---');
  it.each([
    ['name-mismatch', md('---', 'name: other', 'description: d', '---'), 2],
    ['name-format', md('---', 'description: d', 'name: My-Skill', '---'), 3],
    ['description-length', longDescription, 4],
    ['description-length', `\uFEFF${longDescription.replaceAll('\n', '\r\n')}`, 4],
    ['description-blank', md('---', 'name: my-skill', 'description: " "', '---'), 3],
    ['description-blank', md('---', 'name: my-skill', 'description: " \\N "', '---'), 3],
    ['description-blank', md('---', 'name: my-skill', 'description: "\\u00a0\\t"', '---'), 3],
    ['description-blank', md('---', 'name: my-skill', 'license: MIT', 'description: "\\n  "', '---'), 4],
    ['frontmatter-syntax', md('---', 'name: my-skill', 'description: d', '  bad: indent', '---'), 4],
    ['frontmatter-syntax', md('---', 'name: my-skill', 'description: a: b', '---'), 3],
    ['frontmatter-unclosed', md('---', 'name: my-skill', 'description: d'), undefined],
    ['required-fields', md('---', 'name: my-skill', '---'), undefined],
    ['metadata-values', md('---', 'name: my-skill', 'description: d', 'metadata:', '  n: 1', '---'), 5],
    [
      'compatibility-length',
      md('---', 'name: my-skill', 'description: d', `compatibility: ${'c'.repeat(501)}`, '---'),
      4,
    ],
  ])('%s (line %s)', async (rule, manifest, line) => {
    const diagnostic = await frontmatterDiagnostic(manifest);
    expect(diagnostic.severity).toBe('error');
    expect(diagnostic.rule).toBe(rule);
    expect(diagnostic.file).toBe(MANIFEST_PATH);
    expect(diagnostic.line).toBe(line);
    expect('line' in diagnostic).toBe(line !== undefined);
    expect(diagnostic.hint).not.toBe('');
  });

  it('invalid UTF-8 → encoding', async () => {
    expect(await frontmatterDiagnostic(new Uint8Array([0x2d, 0x2d, 0x2d, 0x0a, 0xff, 0x0a]))).toEqual({
      severity: 'error',
      rule: 'encoding',
      file: MANIFEST_PATH,
      message: 'SKILL.md is not valid UTF-8',
      hint: 'save SKILL.md as UTF-8',
    });
  });

  // The SDK reports this as 'SKILL.md frontmatter: line 1: SKILL.md must begin with a "---" line'.
  it.each([[md('# Title', 'text')], ['']])('no frontmatter → frontmatter-missing: %j', async (manifest) => {
    expect((await frontmatterDiagnostic(manifest)).rule).toBe('frontmatter-missing');
  });

  it('several frontmatter problems make ONE diagnostic joining rule ids, messages and hints, at the first known line', async () => {
    const diagnostic = await frontmatterDiagnostic(
      md('---', 'name: other', 'description: ""', 'metadata:', '  k: [1]', '---'),
    );
    expect(diagnostic).toEqual({
      severity: 'error',
      rule: 'name-mismatch,description-length,metadata-values',
      file: MANIFEST_PATH,
      line: 2,
      column: 1,
      message: [
        'frontmatter name "other" must match the last path segment "my-skill"',
        'frontmatter description must be 1-1024 characters',
        'frontmatter metadata must map strings to strings: "k" is a list',
      ].join('; '),
      hint: [
        'set "name: my-skill" or rename the directory to "other"',
        'add a description: what the skill does and when to use it (1-1024 characters)',
        'make "k" one string: join its items (metadata maps strings to strings)',
      ].join('; '),
    });
  });
});

describe('buildRecord: limits give exactly one diagnostic', () => {
  it(`${MAX_FILES + 1} files → skill-too-many-files`, async () => {
    const files: Record<string, FileSpec> = {};
    for (let index = 0; index < MAX_FILES; index++) files[`f${index}.txt`] = new Uint8Array([index % 256]);
    expect(await recordOf(VALID, files)).toEqual({
      severity: 'error',
      rule: 'skill-too-many-files',
      file: MANIFEST_PATH,
      message: 'the skill has 513 files; the limit is 512',
      hint: 'move large collections out of the skill, or split it into several skills',
    });
  });

  it("a nested skill's files count toward the enclosing skill", async () => {
    const files: Record<string, FileSpec> = {
      'inner/SKILL.md': encode(md('---', 'name: inner', 'description: i', '---')),
    };
    for (let index = 0; index < MAX_FILES - 1; index++) files[`inner/f${index}`] = new Uint8Array([]);
    expect((await recordOf(VALID, files)) as Diagnostic).toMatchObject({
      rule: 'skill-too-many-files',
      message: 'the skill has 513 files; the limit is 512',
    });
  });

  it('16 MiB + 1 bytes in total → skill-too-large', async () => {
    expect(await recordOf(VALID, { 'assets/big.bin': { size: MAX_BYTES - Buffer.byteLength(VALID) + 1 } })).toEqual({
      severity: 'error',
      rule: 'skill-too-large',
      file: MANIFEST_PATH,
      message: 'the skill holds 16777217 bytes; the limit is 16777216 (16 MiB)',
      hint: 'move large assets out of the skill, or split it into several skills',
    });
  });

  it('both limits make ONE diagnostic joining both rules', async () => {
    const files: Record<string, FileSpec> = {};
    for (let index = 0; index < MAX_FILES; index++) files[`f${index}`] = { size: index === 0 ? MAX_BYTES : 0 };
    expect(await recordOf(VALID, files)).toEqual({
      severity: 'error',
      rule: 'skill-too-many-files,skill-too-large',
      file: MANIFEST_PATH,
      message: `the skill has 513 files; the limit is 512; the skill holds ${MAX_BYTES + Buffer.byteLength(VALID)} bytes; the limit is 16777216 (16 MiB)`,
      hint: 'move large collections out of the skill, or split it into several skills; move large assets out of the skill, or split it into several skills',
    });
  });
});

describe('a real skill breaking a frontmatter rule and a limit', () => {
  const temps = tempTrees();
  afterEach(() => temps.removeAll());

  it('gives one diagnostic naming both rules, at the frontmatter line', async () => {
    const spec: Record<string, TreeEntry> = { 's/SKILL.md': md('---', 'name: s', 'description: a: b', '---') };
    for (let index = 0; index < MAX_FILES; index++) spec[`s/f${String(index).padStart(3, '0')}`] = '';
    const root = await temps.tree(spec);
    const snapshot = await buildSnapshot([{ dir: root, prefix: [] }]);
    expect(snapshot.skills.size).toBe(0);
    expect(snapshot.diagnostics.map(({ rule, file, line }) => ({ rule, file, line }))).toEqual([
      { rule: 'frontmatter-syntax,skill-too-many-files', file: path.join(root, 's/SKILL.md'), line: 3 },
    ]);
  });

  it('a valid real skill gives the entry the SDK builds from the same files', async () => {
    const root = await temps.tree({
      'acme/s/SKILL.md': skillMdOf('s', 'Real skill.', 'metadata:\n  team: core'),
      'acme/s/ref.md': 'Ref.\n',
      'acme/s/sub/x.bin': new Uint8Array([0, 255]),
    });
    const snapshot = await buildSnapshot([{ dir: root, prefix: [] }]);
    const record = snapshot.skills.get('skill://acme/s/SKILL.md');
    expect(record).toBeDefined();
    const sdk = await skillEntry('acme/s', {
      'SKILL.md': skillMdOf('s', 'Real skill.', 'metadata:\n  team: core'),
      'ref.md': 'Ref.\n',
      'sub/x.bin': new Uint8Array([0, 255]),
    });
    expect(JSON.parse(record?.json ?? 'null')).toStrictEqual(JSON.parse(JSON.stringify(sdk)));
  });
});
