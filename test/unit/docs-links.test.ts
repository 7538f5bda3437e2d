/**
 * Every relative link of the project's Markdown pages (README.md, CONTRIBUTING.md, CHANGELOG.md and docs/**) points
 * at a file that exists and, when it names an anchor, at a heading of that file, as GitHub renders them. Checked on
 * small pages with broken links first, then on the repository's own pages.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { REPO } from '../helpers/paths.js';

/** The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .replace(/`/gu, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/gu, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /gu, '-');
}

/** The text of a page outside fenced code blocks (fence lines and their content blanked, so line numbers hold). */
function prose(text: string): string {
  let fenced = false;
  return text
    .split('\n')
    .map((line) => {
      if (/^\s*```/u.test(line)) {
        fenced = !fenced;
        return '';
      }
      return fenced ? '' : line;
    })
    .join('\n');
}

/** The anchors of a page's headings, numbered as GitHub numbers repeats (`x`, `x-1`, `x-2`). */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const match of prose(text).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gmu)) {
    const base = slug(match[1] as string);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    result.add(count === 0 ? base : `${base}-${count}`);
  }
  return result;
}

/** The targets of a page's inline links, outside code: `[text](target)`, the text possibly spanning lines. */
function linkTargets(text: string): string[] {
  const withoutCode = prose(text)
    .replace(/``[\s\S]*?``/gu, 'code')
    .replace(/`[^`]*`/gu, 'code');
  return [...withoutCode.matchAll(/\[[^\]]*\]\(([^)\s]+)\)/gu)].map((match) => match[1] as string);
}

/** The broken relative links of `file` (a path relative to `root`), each as `target: reason`. */
function brokenLinks(root: string, file: string): string[] {
  const text = readFileSync(path.join(root, file), 'utf8');
  const broken: string[] = [];
  for (const target of linkTargets(text)) {
    if (/^[a-z][a-z0-9+.-]*:/iu.test(target)) continue; // https:, mailto:, …
    const [pathPart = '', anchor] = target.split('#', 2);
    const resolved = pathPart === '' ? file : path.posix.normalize(path.posix.join(path.posix.dirname(file), pathPart));
    const absolute = path.join(root, resolved);
    if (resolved.startsWith('..') || !existsSync(absolute)) {
      broken.push(`${target}: no file ${resolved}`);
      continue;
    }
    if (anchor === undefined) continue;
    if (!resolved.endsWith('.md') || statSync(absolute).isDirectory()) {
      broken.push(`${target}: an anchor into a file that is not a Markdown page`);
    } else if (!anchors(readFileSync(absolute, 'utf8')).has(anchor)) {
      broken.push(`${target}: no heading #${anchor} in ${resolved}`);
    }
  }
  return broken;
}

/** The Markdown pages this test keeps linked: the top-level guides and everything under docs/. */
function pages(root: string): string[] {
  const found = ['README.md', 'CONTRIBUTING.md', 'CHANGELOG.md'].filter((file) => existsSync(path.join(root, file)));
  const walk = (dir: string): void => {
    for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const relative = path.posix.join(dir, entry.name);
      if (entry.isDirectory()) walk(relative);
      else if (entry.name.endsWith('.md')) found.push(relative);
    }
  };
  if (existsSync(path.join(root, 'docs'))) walk('docs');
  return found.sort();
}

describe('slug', () => {
  it.each([
    ['Quick start', 'quick-start'],
    ["What reaches each host's model", 'what-reaches-each-hosts-model'],
    ['Hosts that read `skill://index.json`', 'hosts-that-read-skillindexjson'],
    ['Once skills-serve is published: npx', 'once-skills-serve-is-published-npx'],
    ['Running as a service (HTTP)', 'running-as-a-service-http'],
    [
      '1. Which git: the system `git` binary, not isomorphic-git',
      '1-which-git-the-system-git-binary-not-isomorphic-git',
    ],
    ['`--poll` and file_events', '--poll-and-file_events'],
    ['The host says `Failed to connect`', 'the-host-says-failed-to-connect'],
  ])('%s → %s', (heading, expected) => {
    expect(slug(heading)).toBe(expected);
  });
});

describe('broken links', () => {
  it('names a missing file, a missing anchor, an anchor into a folder, and ignores code and absolute URLs', async () => {
    const { mkdtempSync, mkdirSync, writeFileSync, rmSync } = await import('node:fs');
    const os = await import('node:os');
    const root = mkdtempSync(path.join(os.tmpdir(), 'docs-links-'));
    try {
      mkdirSync(path.join(root, 'docs', 'hosts'), { recursive: true });
      writeFileSync(
        path.join(root, 'docs', 'hosts', 'README.md'),
        '# Hosts\n\n## Claude Code\n\n## Setup\n\n## Setup\n',
      );
      writeFileSync(
        path.join(root, 'README.md'),
        [
          '# Title',
          '[ok](docs/hosts/README.md#claude-code) [ok too](docs/hosts/README.md#setup-1) [self](#title)',
          '[gone](docs/hosts.md) [no anchor](docs/hosts/README.md#cursor) [folder](docs/hosts#x)',
          '[split over',
          'lines](#nowhere) [web](https://example.com/x#y) `[code](missing.md)` ``a `[b](c.md)` d``',
          '```',
          '[fenced](missing.md)',
          '```',
          '[up](../outside.md)',
        ].join('\n'),
      );
      expect(pages(root)).toEqual(['README.md', 'docs/hosts/README.md']);
      expect(brokenLinks(root, 'README.md')).toEqual([
        'docs/hosts.md: no file docs/hosts.md',
        'docs/hosts/README.md#cursor: no heading #cursor in docs/hosts/README.md',
        'docs/hosts#x: an anchor into a file that is not a Markdown page',
        '#nowhere: no heading #nowhere in README.md',
        '../outside.md: no file ../outside.md',
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe("the repository's pages", () => {
  it.each(pages(REPO))('%s: every relative link resolves', (file) => {
    expect(brokenLinks(REPO, file)).toEqual([]);
  });
});
