import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { buildEntry, type EntryInput } from '../../src/index/entry.js';
import { mimeTypeFor } from '../../src/index/mime.js';
import { MAX_SKILL_BYTES, MAX_SKILL_FILES } from '../../src/index/policy.js';
import type { Diagnostic, FileRecord } from '../../src/index/types.js';
import { buildSkillUri } from '../../src/index/uri.js';

const SKILL_DIR = '/srv/skills/my-skill';
const MANIFEST_PATH = `${SKILL_DIR}/SKILL.md`;
const md = (...lines: string[]): string => `${lines.join('\n')}\n`;
const VALID = md('---', 'name: my-skill', 'description: Does things.', '---', '# Body');

function record(skillPath: readonly string[], filePath: readonly string[], bytes: Uint8Array, size = bytes.byteLength): FileRecord {
  const name = filePath.at(-1) ?? '';
  return {
    uri: buildSkillUri([...skillPath, ...filePath]),
    path: [SKILL_DIR, ...filePath].join('/'),
    name,
    digest: `sha256:${createHash('sha256').update(bytes).digest('hex')}`,
    size,
    mtimeMs: 1_700_000_000_000,
    ctimeMs: 1_700_000_000_000,
    ino: 1,
    dev: 1,
    mimeType: mimeTypeFor(name),
    rootIndex: 0,
    rel: [skillPath.at(-1) ?? '', ...filePath].join('/'),
  };
}

function input(skillMd: string | Uint8Array, extra: readonly FileRecord[] = [], segments: readonly string[] = ['my-skill']): EntryInput {
  const manifestBytes = typeof skillMd === 'string' ? new TextEncoder().encode(skillMd) : skillMd;
  return { segments, manifestPath: MANIFEST_PATH, manifestBytes, files: [record(segments, ['SKILL.md'], manifestBytes), ...extra] };
}

async function diagnosticOf(entryInput: EntryInput): Promise<Diagnostic> {
  const result = await buildEntry(entryInput);
  if (!('diagnostic' in result)) throw new Error(`expected a diagnostic, got ${JSON.stringify(result)}`);
  expect(Object.keys(result)).toEqual(['diagnostic']);
  return result.diagnostic;
}

async function frontmatterOf(skillMd: string): Promise<Record<string, unknown>> {
  const result = await buildEntry(input(skillMd));
  if (!('built' in result)) throw new Error(`expected an entry, got ${JSON.stringify(result)}`);
  return result.built.entry.frontmatter;
}

describe('buildEntry: valid skills', () => {
  it('builds a deeply frozen entry with every file once, sorted by URI', async () => {
    const segments = ['acme', 'my-skill'];
    const files = [
      record(segments, ['~tilde.txt'], new Uint8Array([1])),
      record(segments, ['references', 'GUIDE.md'], new TextEncoder().encode('# Guide\n')),
      record(segments, ['Assets', 'logo.png'], new Uint8Array([0x89, 0x50, 0x4e, 0x47])),
      record(segments, ['café.md'], new Uint8Array([])),
      record(segments, ['a b.md'], new TextEncoder().encode('x')),
      record(segments, ['nested', 'SKILL.md'], new TextEncoder().encode(md('---', 'name: nested', 'description: n', '---'))),
    ];
    const result = await buildEntry(input(VALID, files, segments));
    if (!('built' in result)) throw new Error(JSON.stringify(result));
    const { entry, name, description } = result.built;
    expect(name).toBe('my-skill');
    expect(description).toBe('Does things.');
    expect(entry.uri).toBe('skill://acme/my-skill/SKILL.md');
    expect(entry.frontmatter).toEqual({ name: 'my-skill', description: 'Does things.' });
    const resources = entry.resources as readonly { uri: string; digest: string; size: number }[];
    expect(resources.map((resource) => resource.uri)).toEqual([
      'skill://acme/my-skill/Assets/logo.png',
      'skill://acme/my-skill/SKILL.md',
      'skill://acme/my-skill/a%20b.md',
      'skill://acme/my-skill/caf%C3%A9.md',
      'skill://acme/my-skill/nested/SKILL.md',
      'skill://acme/my-skill/references/GUIDE.md',
      'skill://acme/my-skill/~tilde.txt',
    ]);
    const manifest = resources[1];
    expect(manifest).toEqual({
      uri: 'skill://acme/my-skill/SKILL.md',
      digest: `sha256:${createHash('sha256').update(VALID).digest('hex')}`,
      size: Buffer.byteLength(VALID),
    });
    expect(Object.keys(resources[0] ?? {})).toEqual(['uri', 'digest', 'size']);
    expect(resources.find((resource) => resource.uri.endsWith('caf%C3%A9.md'))).toEqual({
      uri: 'skill://acme/my-skill/caf%C3%A9.md',
      digest: 'sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
      size: 0,
    });
    expect(Object.isFrozen(entry)).toBe(true);
    expect(Object.isFrozen(entry.frontmatter)).toBe(true);
    expect(Object.isFrozen(entry.resources)).toBe(true);
    expect(resources.every((resource) => Object.isFrozen(resource))).toBe(true);
  });

  it('freezes nested frontmatter values', async () => {
    const result = await buildEntry(input(md('---', 'name: my-skill', 'description: d', 'metadata:', '  k: v', 'tags: [a]', '---')));
    if (!('built' in result)) throw new Error(JSON.stringify(result));
    expect(Object.isFrozen(result.built.entry.frontmatter['metadata'])).toBe(true);
    expect(Object.isFrozen(result.built.entry.frontmatter['tags'])).toBe(true);
  });

  it.each([
    ['"|" keeps the final newline', ['description: |', '  Line one.', '  Line two.'], { description: 'Line one.\nLine two.\n' }],
    ['"|-" strips it', ['description: |-', '  x'], { description: 'x' }],
    ['">" folds lines', ['description: >', '  a', '  b'], { description: 'a b\n' }],
    ['decimal int', ['description: d', 'version: 012'], { description: 'd', version: 12 }],
    ['octal and hex ints', ['description: d', 'o: 0o14', 'h: 0x1F'], { description: 'd', o: 12, h: 31 }],
    ['floats', ['description: d', 'f: 1.5', 'e: 1e3'], { description: 'd', f: 1.5, e: 1000 }],
    ['quoted number stays a string', ['description: d', 'version: "1.0"', "v: '012'"], { description: 'd', version: '1.0', v: '012' }],
    ['no YAML 1.1 sexagesimal', ['description: d', 'time: 1:30'], { description: 'd', time: '1:30' }],
    ['no YAML 1.1 booleans', ['description: d', 'a: yes', 'b: on', 'c: True'], { description: 'd', a: 'yes', b: 'on', c: true }],
    ['dates stay strings', ['description: d', 'date: 2024-01-01'], { description: 'd', date: '2024-01-01' }],
    ['nulls', ['description: d', 'a: ~', 'b:', 'c: null'], { description: 'd', a: null, b: null, c: null }],
    [
      'unknown fields pass through',
      ['description: d', 'argument-hint: <file>', 'user-invocable: false', 'allowed-tools: [Read, "Bash(git:*)"]'],
      { description: 'd', 'argument-hint': '<file>', 'user-invocable': false, 'allowed-tools': ['Read', 'Bash(git:*)'] },
    ],
    ['metadata of strings', ['description: d', 'metadata:', '  author: acme', '  version: "2"'], { description: 'd', metadata: { author: 'acme', version: '2' } }],
  ])('frontmatter: %s', async (_label, lines, expected) => {
    expect(await frontmatterOf(md('---', 'name: my-skill', ...lines, '---', 'body'))).toStrictEqual({ name: 'my-skill', ...expected });
  });

  it.each([
    ['BOM', `\uFEFF${VALID}`],
    ['CRLF', VALID.replaceAll('\n', '\r\n')],
    ['BOM + CRLF', `\uFEFF${VALID.replaceAll('\n', '\r\n')}`],
    ['no body, no final newline', '---\nname: my-skill\ndescription: Does things.\n---'],
  ])('accepts %s', async (_label, skillMd) => {
    expect(await frontmatterOf(skillMd)).toStrictEqual({ name: 'my-skill', description: 'Does things.' });
  });

  it('accepts exactly 512 files and exactly 16 MiB', async () => {
    const files = Array.from({ length: MAX_SKILL_FILES - 1 }, (_, index) => record(['my-skill'], [`f${index}`], new Uint8Array([])));
    const manifest = new TextEncoder().encode(VALID);
    files[0] = record(['my-skill'], ['big.bin'], new Uint8Array([]), MAX_SKILL_BYTES - manifest.byteLength);
    const result = await buildEntry(input(manifest, files));
    expect('built' in result && result.built.entry.resources.length).toBe(512);
  });
});

describe('buildEntry: invalid skills give exactly one diagnostic', () => {
  const longDescription = md('---', 'name: my-skill', '# comment', 'description: ' + 'x'.repeat(1025), '---');
  it.each([
    ['name-mismatch', md('---', 'name: other', 'description: d', '---'), 2],
    ['name-format', md('---', 'description: d', 'name: My-Skill', '---'), 3],
    ['description-length', longDescription, 4],
    ['description-length', `\uFEFF${longDescription.replaceAll('\n', '\r\n')}`, 4],
    ['frontmatter-syntax', md('---', 'name: my-skill', 'description: d', '  bad: indent', '---'), 4],
    ['frontmatter-syntax', md('---', 'name: my-skill', 'description: a: b', '---'), 3],
    ['frontmatter-unclosed', md('---', 'name: my-skill', 'description: d'), undefined],
    ['required-fields', md('---', 'name: my-skill', '---'), undefined],
    ['metadata-values', md('---', 'name: my-skill', 'description: d', 'metadata:', '  n: 1', '---'), 4],
    ['compatibility-length', md('---', 'name: my-skill', 'description: d', `compatibility: ${'c'.repeat(501)}`, '---'), 4],
  ])('%s (line %s)', async (rule, skillMd, line) => {
    const diagnostic = await diagnosticOf(input(skillMd));
    expect(diagnostic.severity).toBe('error');
    expect(diagnostic.rule).toBe(rule);
    expect(diagnostic.file).toBe(MANIFEST_PATH);
    expect(diagnostic.line).toBe(line);
    expect('line' in diagnostic).toBe(line !== undefined);
    expect(diagnostic.hint).not.toBe('');
  });

  it('invalid UTF-8 → encoding', async () => {
    const diagnostic = await diagnosticOf(input(new Uint8Array([0x2d, 0x2d, 0x2d, 0x0a, 0xff, 0x0a])));
    expect(diagnostic).toEqual({
      severity: 'error',
      rule: 'encoding',
      file: MANIFEST_PATH,
      message: 'SKILL.md is not valid UTF-8',
      hint: 'save SKILL.md as UTF-8',
    });
  });

  // The SDK reports this as 'SKILL.md frontmatter: line 1: SKILL.md must begin with a "---" line'.
  it.each([[md('# Title', 'text')], ['']])('no frontmatter → frontmatter-missing: %j', async (skillMd) => {
    expect((await diagnosticOf(input(skillMd))).rule).toBe('frontmatter-missing');
  });

  it('513 files → skill-too-many-files', async () => {
    const files = Array.from({ length: MAX_SKILL_FILES }, (_, index) => record(['my-skill'], [`f${index}.txt`], new Uint8Array([index % 256])));
    expect(await diagnosticOf(input(VALID, files))).toEqual({
      severity: 'error',
      rule: 'skill-too-many-files',
      file: MANIFEST_PATH,
      message: 'the skill has 513 files; the limit is 512',
      hint: 'move large collections out of the skill, or split it into several skills',
    });
  });

  it('16 MiB + 1 bytes in total → skill-too-large', async () => {
    const manifest = new TextEncoder().encode(VALID);
    const big = record(['my-skill'], ['assets', 'big.bin'], new Uint8Array([]), MAX_SKILL_BYTES - manifest.byteLength + 1);
    expect(await diagnosticOf(input(manifest, [big]))).toEqual({
      severity: 'error',
      rule: 'skill-too-large',
      file: MANIFEST_PATH,
      message: 'the skill holds 16777217 bytes; the limit is 16777216 (16 MiB)',
      hint: 'move large assets out of the skill, or split it into several skills',
    });
  });

  it('several problems make ONE diagnostic joining rule ids, messages and hints', async () => {
    const skillMd = md('---', 'name: other', 'description: ""', 'metadata:', '  k: [1]', '---');
    const files = Array.from({ length: MAX_SKILL_FILES }, (_, index) => record(['my-skill'], [`f${index}`], new Uint8Array([]), index === 0 ? MAX_SKILL_BYTES : 0));
    const diagnostic = await diagnosticOf(input(skillMd, files));
    expect(diagnostic.rule).toBe('name-mismatch,description-length,metadata-values,skill-too-many-files,skill-too-large');
    expect(diagnostic.line).toBe(2);
    expect(diagnostic.message).toBe(
      [
        'frontmatter name "other" must match the last path segment "my-skill"',
        'frontmatter description must be 1-1024 characters',
        'frontmatter metadata must map strings to strings',
        'the skill has 513 files; the limit is 512',
        `the skill holds ${MAX_SKILL_BYTES + Buffer.byteLength(skillMd)} bytes; the limit is 16777216 (16 MiB)`,
      ].join('; '),
    );
    expect(diagnostic.hint).toBe(
      [
        'set "name: my-skill" or rename the directory to "other"',
        'shorten the description to at most 1024 characters; move details into the SKILL.md body',
        'give every metadata key a string value (quote numbers; join lists into one string)',
        'move large collections out of the skill, or split it into several skills',
        'move large assets out of the skill, or split it into several skills',
      ].join('; '),
    );
  });

  it('a frontmatter error plus a limit gives one diagnostic with both rules', async () => {
    const skillMd = md('---', 'name: my-skill', 'description: a: b', '---');
    const files = Array.from({ length: MAX_SKILL_FILES }, (_, index) => record(['my-skill'], [`f${index}`], new Uint8Array([])));
    const diagnostic = await diagnosticOf(input(skillMd, files));
    expect(diagnostic.rule).toBe('frontmatter-syntax,skill-too-many-files');
    expect(diagnostic.line).toBe(3);
  });
});
