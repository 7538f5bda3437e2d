/**
 * Git root arguments and remote URLs (pure): `git+<url>#<ref>:<subdir>`, `prefix=git+…`, `github:owner/repo`, the
 * accepted schemes, refs and subdirectories, the `--git-allow` allowlist, and redaction: a credential typed into a
 * URL never reaches a message.
 */
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { isGitRemoteAllowed, parseGitAllow, parseGitUrl, redactSecrets, redactUrls } from '../../src/roots/git/url.js';
import { parseSourceArg } from '../../src/roots/root-arg.js';

const CWD = path.resolve('/work/base');
const SHA = '0123456789abcdef0123456789abcdef01234567';

/** The git part of a parsed argument, in a comparable shape. */
function parsed(arg: string): {
  url: string;
  display: string;
  ref: string | undefined;
  subdir: string;
  prefix: readonly string[];
} {
  const source = parseSourceArg(arg, CWD);
  if (source.kind !== 'git') throw new Error(`${arg} parsed as a folder`);
  return {
    url: source.git.remote.url,
    display: source.git.remote.display,
    ref: source.git.ref,
    subdir: source.git.subdir,
    prefix: source.git.prefix,
  };
}

/** The message of the error `fn` throws (and that it is a RangeError). */
function messageOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(RangeError);
    return (error as Error).message;
  }
  throw new Error('did not throw');
}

describe('parseSourceArg: git roots', () => {
  it.each([
    ['git+https://github.com/acme/skills.git', 'https://github.com/acme/skills.git', undefined, '', []],
    ['git+https://github.com/acme/skills.git#v1.2', 'https://github.com/acme/skills.git', 'v1.2', '', []],
    [
      'git+https://github.com/acme/skills.git#v1.2:skills/team',
      'https://github.com/acme/skills.git',
      'v1.2',
      'skills/team',
      [],
    ],
    ['git+https://github.com/acme/skills.git#:skills/', 'https://github.com/acme/skills.git', undefined, 'skills', []],
    ['git+https://github.com/acme/skills.git#', 'https://github.com/acme/skills.git', undefined, '', []],
    [`git+https://github.com/acme/skills.git#${SHA.toUpperCase()}`, 'https://github.com/acme/skills.git', SHA, '', []],
    [
      'git+https://github.com/acme/skills.git#refs/heads/release/2026',
      'https://github.com/acme/skills.git',
      'refs/heads/release/2026',
      '',
      [],
    ],
    ['git+http://127.0.0.1:8080/team.git#main', 'http://127.0.0.1:8080/team.git', 'main', '', []],
    ['git+http://[::1]:8080/team.git', 'http://[::1]:8080/team.git', undefined, '', []],
    ['git+file:///srv/git/skills.git#main:a/b', 'file:///srv/git/skills.git', 'main', 'a/b', []],
    ['git+ssh://git@github.com/acme/skills.git#main', 'ssh://git@github.com/acme/skills.git', 'main', '', []],
    ['git+https://host/a/../b/skills.git', 'https://host/b/skills.git', undefined, '', []],
    [
      'acme/billing=git+https://github.com/acme/skills.git#v1:billing',
      'https://github.com/acme/skills.git',
      'v1',
      'billing',
      ['acme', 'billing'],
    ],
    ['github:acme/skills', 'https://github.com/acme/skills.git', undefined, '', []],
    ['github:acme/skills.git#v2:skills', 'https://github.com/acme/skills.git', 'v2', 'skills', []],
    ['team=github:acme/skills#main', 'https://github.com/acme/skills.git', 'main', '', ['team']],
  ])('%s', (arg, url, ref, subdir, prefix) => {
    expect(parsed(arg)).toMatchObject({ url, ref, subdir, prefix });
  });

  it('leaves folder arguments to parseRootArg, including paths that look like git roots', () => {
    expect(parseSourceArg('./skills', CWD)).toEqual({
      kind: 'folder',
      root: { dir: path.join(CWD, 'skills'), prefix: [] },
    });
    expect(parseSourceArg('./git+x', CWD)).toEqual({
      kind: 'folder',
      root: { dir: path.join(CWD, 'git+x'), prefix: [] },
    });
    expect(parseSourceArg('acme=./dir', CWD)).toEqual({
      kind: 'folder',
      root: { dir: path.join(CWD, 'dir'), prefix: ['acme'] },
    });
  });

  it.each([
    [
      'git+ext::sh -c touch% /tmp/pwned',
      'git URL ext::sh -c touch% /tmp/pwned must start with file://, http://, https:// or ssh:// (ext:: and other transports are not allowed)',
    ],
    [
      'git+git://github.com/acme/skills.git',
      'git URL scheme "git:" is not allowed: use file://, http://, https:// or ssh://',
    ],
    ['git+ftp://host/x.git', 'git URL scheme "ftp:" is not allowed: use file://, http://, https:// or ssh://'],
    [
      'git+skills.git',
      'git URL skills.git must start with file://, http://, https:// or ssh:// (ext:: and other transports are not allowed)',
    ],
    ['git+https://', 'git URL https:// is not a valid URL'],
    ['git+https://host/', 'git URL https://host/ must name a repository path'],
    ['git+https://host/x.git?token=abc', 'git URL https://host/x.git must not have a query or fragment'],
    ['git+file://otherhost/srv/x.git', 'file URL file://otherhost/srv/x.git must name a local path (file:///path)'],
    [
      'git+https://host/x.git#-upload-pack=evil',
      'git ref "-upload-pack=evil" is not a valid branch, tag or commit id: it starts with "-"',
    ],
    ['git+https://host/x.git#a..b', 'git ref "a..b" is not a valid branch, tag or commit id: it holds ".."'],
    [
      'git+https://host/x.git#a b',
      'git ref "a b" is not a valid branch, tag or commit id: it holds a space, a control character or one of ~ ^ : ? * [ \\',
    ],
    [
      'git+https://host/x.git#main^{tree}',
      'git ref "main^{tree}" is not a valid branch, tag or commit id: it holds a space, a control character or one of ~ ^ : ? * [ \\',
    ],
    [
      'git+https://host/x.git#x.lock',
      'git ref "x.lock" is not a valid branch, tag or commit id: a part starts with "." or ends with ".lock"',
    ],
    ['git+https://host/x.git#@', 'git ref "@" is not a valid branch, tag or commit id: it holds "@{" or is "@"'],
    [
      'git+https://host/x.git#main:../etc',
      'git subdirectory "../etc" must be "/"-separated names inside the repository (no ".", ".." or empty parts)',
    ],
    [
      'git+https://host/x.git#main:a//b',
      'git subdirectory "a//b" must be "/"-separated names inside the repository (no ".", ".." or empty parts)',
    ],
    [
      'github:acme',
      'root "github:acme" must be github:owner/repo, optionally followed by #ref, #ref:subdir or #:subdir',
    ],
    [
      'github:acme/skills/extra',
      'root "github:acme/skills/extra" must be github:owner/repo, optionally followed by #ref, #ref:subdir or #:subdir',
    ],
    [
      'github:-acme/skills',
      'root "github:-acme/skills" must be github:owner/repo, optionally followed by #ref, #ref:subdir or #:subdir',
    ],
    [
      'github:acme/..',
      'root "github:acme/.." must be github:owner/repo, optionally followed by #ref, #ref:subdir or #:subdir',
    ],
    [
      'a//b=git+https://host/x.git',
      'root "a//b=…" must have a prefix of non-empty "/"-separated names (e.g. acme/billing=git+https://host/repo.git)',
    ],
  ])('refuses %s', (arg, message) => {
    expect(messageOf(() => parseSourceArg(arg, CWD))).toBe(message);
  });

  it.each([
    [
      'git+https://alice:s3cr3t-pass@github.com/acme/skills.git#main',
      'git URL https://***@github.com/acme/skills.git holds credentials',
    ],
    [
      'git+https://ghp_tokenvalue123@github.com/acme/skills.git',
      'git URL https://***@github.com/acme/skills.git holds credentials',
    ],
    [
      'git+ssh://git:s3cr3t-pass@github.com/acme/skills.git',
      'git URL ssh://***@github.com/acme/skills.git holds credentials',
    ],
    [
      'git+https://alice:s3cr3t-pass@github.com/acme/skills.git?x=1',
      'git URL https://***@github.com/acme/skills.git holds credentials',
    ],
    ['git+https://alice:s3cr3t-pass@', 'git URL https://***@ is not a valid URL'],
    ['git+ext::https://alice:s3cr3t-pass@host/x', 'git URL ext::https://***@host/x must start with'],
  ])('refuses credentials in %s without repeating them', (arg, start) => {
    const message = messageOf(() => parseSourceArg(arg, CWD));
    expect(message.startsWith(start)).toBe(true);
    expect(message).not.toMatch(/s3cr3t|alice|ghp_tokenvalue123/u);
  });

  it('keeps the ssh user name (not a secret) in the display form', () => {
    expect(parsed('git+ssh://git@github.com:2222/acme/skills.git').display).toBe(
      'ssh://git@github.com:2222/acme/skills.git',
    );
  });
});

describe('redaction', () => {
  it('removes user information from every URL in a text', () => {
    expect(
      redactUrls("fatal: unable to access 'https://x-access-token:abc@github.com/a.git/': 403 and http://u@h/x"),
    ).toBe("fatal: unable to access 'https://***@github.com/a.git/': 403 and http://***@h/x");
  });

  it('removes a token and the base64 of user:token (an Authorization header value)', () => {
    const header = Buffer.from('x-access-token:tok-123').toString('base64');
    expect(redactSecrets(`tok-123 / Authorization: Basic ${header}`, ['tok-123', 'x-access-token:tok-123'])).toBe(
      '*** / Authorization: Basic ***',
    );
  });
});

describe('--git-allow', () => {
  const remote = (url: string) => parseGitUrl(url);
  const allow = (...entries: string[]) => entries.map((entry) => parseGitAllow(entry));

  it.each([
    ['https://github.com/acme/skills.git', ['github.com/acme'], true],
    ['https://GitHub.com/acme/skills.git', ['github.com/acme'], true],
    ['ssh://git@github.com/acme/skills.git', ['github.com/acme'], true],
    ['https://github.com/acme/skills.git', ['github.com/acme/skills'], true],
    ['https://github.com/acme/skills', ['github.com/acme/skills.git'], true],
    ['https://github.com/acme/skills.git', ['github.com'], true],
    ['https://github.com/acme-evil/skills.git', ['github.com/acme'], false],
    ['https://github.com/Acme/skills.git', ['github.com/acme'], false],
    ['https://github.com/acme/../evil/skills.git', ['github.com/acme'], false],
    ['https://github.com/acme/skills-fork.git', ['github.com/acme/skills'], false],
    ['https://github.com.evil.example/acme/skills.git', ['github.com/acme'], false],
    ['https://127.0.0.1:8080/acme/x.git', ['127.0.0.1:8080/acme'], true],
    ['https://127.0.0.1:9090/acme/x.git', ['127.0.0.1:8080/acme'], false],
    ['https://127.0.0.1:9090/acme/x.git', ['127.0.0.1/acme'], true],
    ['file:///srv/git/skills.git', ['github.com'], false],
    ['file:///srv/git/skills.git', ['file:///srv/git'], true],
    ['file:///srv/gitx/skills.git', ['file:///srv/git'], false],
    ['https://gitlab.example/acme/skills.git', ['github.com/acme', 'gitlab.example/acme'], true],
    ['https://anything.example/x.git', [], true],
  ])('%s with %j → %s', (url, entries, admitted) => {
    expect(isGitRemoteAllowed(remote(url), allow(...entries))).toBe(admitted);
  });

  it.each(['https://github.com/acme', 'github.com/acme/../x', '', 'host name/x', 'file://host/dir'])(
    'refuses the entry %j',
    (entry) => {
      expect(messageOf(() => parseGitAllow(entry))).toBe(
        `--git-allow must be host, host/org, host/org/repo or file:///dir (got "${entry}")`,
      );
    },
  );
});
