import { describe, expect, it } from 'vitest';

import { SkillsServeError } from '../../src/errors.js';
import { decodeCursor, encodeCursor, pageOf } from '../../src/index/snapshot.js';
import { MAX_URI_LENGTH } from '../../src/index/uri.js';

const b64url = (text: string): string => Buffer.from(text, 'utf8').toString('base64url');

function expectInvalidCursor(action: () => unknown): void {
  let caught: unknown;
  try {
    action();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(SkillsServeError);
  expect((caught as SkillsServeError).code).toBe('INVALID_CURSOR');
  expect((caught as SkillsServeError).message).toBe('Invalid cursor: it was not issued by this server');
}

describe('encodeCursor / decodeCursor', () => {
  it.each([
    ['skill://a/SKILL.md'],
    ['skill://caf%C3%A9/x%20y/SKILL.md'],
    ['skill://a/~&+(|)'],
    [''],
    ['after:after:'],
    ['café 日本語 😀'],
    [`skill://a/${'x'.repeat(MAX_URI_LENGTH - 10)}`],
  ])('round-trips %j', (uri) => {
    const cursor = encodeCursor(uri);
    expect(cursor).toMatch(/^[\w-]+$/u);
    expect(decodeCursor(cursor)).toBe(uri);
  });

  it('is deterministic and opaque base64url of "after:" + URI', () => {
    expect(encodeCursor('skill://a')).toBe('YWZ0ZXI6c2tpbGw6Ly9h');
    expect(encodeCursor('skill://a')).toBe(encodeCursor('skill://a'));
  });

  const valid = encodeCursor('skill://a/b'); // 17 bytes → 23 chars, 2 spare bits in the last char
  const lastChar = valid.at(-1) ?? '';
  const lastIndex = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'.indexOf(lastChar);
  const sameBytesOtherSpelling =
    valid.slice(0, -1) + 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'[lastIndex | 1];

  it.each([
    ['empty', ''],
    ['garbage with punctuation', '!!!not a cursor!!!'],
    ['space inside', 'YWZ0 ZXI6'],
    ['standard base64 "+"', b64url('after:skill://a/>>>').replaceAll('-', '+')],
    ['standard base64 "/"', Buffer.from('after:skill://a/???', 'utf8').toString('base64')],
    ['padded (=)', `${valid}=`],
    ['padded (==)', `${b64url('after:x')}==`],
    ['base64url of text without the prefix', b64url('skill://a/b')],
    ['base64url of "before:"', b64url('before:skill://a/b')],
    ['prefix in other case', b64url('AFTER:skill://a/b')],
    ['prefix not at the start', b64url(' after:skill://a/b')],
    ['prefix split by a BOM', b64url('\uFEFFafter:skill://a')],
    ['non-canonical spare bits', sameBytesOtherSpelling],
    ['one extra char (length % 4 == 1)', `${encodeCursor('skill://ab/c')}A`],
    ['a NUL-extended spelling plus junk', `${valid}AA`],
    [
      'invalid UTF-8 after the prefix',
      Buffer.concat([Buffer.from('after:'), Buffer.from([0xe9])]).toString('base64url'),
    ],
    ['longer than the longest URI can make', encodeCursor(`skill://a/${'x'.repeat(MAX_URI_LENGTH)}`)],
    ['unicode letters', 'YWZ0ZXI6é'],
    ['newline', `${valid}\n`],
  ])('rejects %s', (_label, cursor) => {
    expectInvalidCursor(() => decodeCursor(cursor));
  });

  it('the adversarial spellings are what their labels say', () => {
    expect(encodeCursor('skill://ab/c').length % 4).toBe(0);
    expect(sameBytesOtherSpelling).not.toBe(valid);
    expect(Buffer.from(sameBytesOtherSpelling, 'base64url').toString('utf8')).toBe('after:skill://a/b');
  });

  it.each([[42], [null], [{}]])('rejects a non-string cursor %j', (cursor) => {
    expectInvalidCursor(() => decodeCursor(cursor as unknown as string));
  });
});

const letters = (text: string): string[] => [...text].map((char) => `skill://${char}`);
const key = (uri: string): string => uri;

/** Walks every page of `items` and returns the pages' items. */
function walk(items: readonly string[], pageSize: number): string[][] {
  const pages: string[][] = [];
  let cursor: string | undefined;
  for (let guard = 0; guard <= items.length + 1; guard++) {
    const page = pageOf(items, cursor, pageSize, key);
    pages.push([...page.items]);
    if (page.nextCursor === undefined) return pages;
    cursor = page.nextCursor;
  }
  throw new Error('pagination did not terminate');
}

describe('pageOf', () => {
  it.each([
    ['size 1', 'abcde', 1, ['a', 'b', 'c', 'd', 'e']],
    ['size 2, remainder', 'abcde', 2, ['ab', 'cd', 'e']],
    ['exact multiple: no empty trailing page', 'abcdef', 3, ['abc', 'def']],
    ['size equal to length', 'abc', 3, ['abc']],
    ['size larger than list', 'abc', 100, ['abc']],
    ['single item', 'a', 1, ['a']],
    ['empty list', '', 5, ['']],
  ])('%s', (_label, text, pageSize, expected) => {
    const items = letters(text);
    const pages = walk(items, pageSize);
    expect(pages).toEqual(expected.map(letters));
    expect(pages.flat()).toEqual(items);
  });

  it('gives nextCursor only when items remain, naming the last item of the page', () => {
    const items = letters('abcd');
    expect(pageOf(items, undefined, 3, key)).toEqual({ items: letters('abc'), nextCursor: encodeCursor('skill://c') });
    expect(pageOf(items, encodeCursor('skill://c'), 3, key)).toEqual({ items: letters('d') });
    expect(pageOf([], undefined, 3, key)).toEqual({ items: [] });
  });

  it('ends a page at the boundary when it starts before it, and pages on as usual after it', () => {
    const items = letters('abcdefghij');
    const budget = { max: 1000, sizeOf: () => 1, boundary: 4 };
    const pages: (readonly string[])[] = [];
    let cursor: string | undefined;
    do {
      const page = pageOf(items, cursor, 3, key, budget);
      pages.push(page.items);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    expect(pages).toEqual(['abc', 'd', 'efg', 'hij'].map(letters));
  });

  it('pages objects by their key, in code-unit order', () => {
    const items = ['skill://A', 'skill://a', 'skill://a/%C3%A9', 'skill://a/B', 'skill://a/~'].map((uri) => ({ uri }));
    const first = pageOf(items, undefined, 2, (item) => item.uri);
    expect(first.items).toEqual(items.slice(0, 2));
    const second = pageOf(items, first.nextCursor, 2, (item) => item.uri);
    expect(second.items).toEqual(items.slice(2, 4));
    expect(pageOf(items, second.nextCursor, 2, (item) => item.uri)).toEqual({ items: items.slice(4) });
  });

  const uris = (names: readonly string[]): string[] => names.map((name) => `skill://${name}`);
  it.each([
    ['the named item is removed', ['a', 'b', 'd', 'e', 'f'], ['d', 'e']],
    ['the named item and the next are removed', ['a', 'b', 'e', 'f'], ['e', 'f']],
    ['items are inserted before it', ['a', 'a0', 'b', 'b0', 'c', 'd', 'e', 'f'], ['d', 'e']],
    ['an item is inserted right after it', ['a', 'b', 'c', 'c0', 'd', 'e', 'f'], ['c0', 'd']],
    ['it is replaced by a neighbour', ['a', 'b', 'c0', 'd'], ['c0', 'd']],
    ['everything after it is removed', ['a', 'b', 'c'], []],
    ['the list is emptied', [], []],
  ])('a cursor after "c" stays valid when %s', (_label, changed, expectedNext) => {
    const first = pageOf(uris(['a', 'b', 'c', 'd', 'e', 'f']), undefined, 3, key);
    expect(first.items).toEqual(uris(['a', 'b', 'c']));
    const next = pageOf(uris(changed), first.nextCursor, 2, key);
    expect(next.items).toEqual(uris(expectedNext));
  });

  it('a cursor past the last item gives an empty final page', () => {
    expect(pageOf(letters('abc'), encodeCursor('skill://z'), 2, key)).toEqual({ items: [] });
  });

  it('a cursor before the first item gives the first page', () => {
    expect(pageOf(letters('bcd'), encodeCursor('skill://a'), 2, key)).toEqual({
      items: letters('bc'),
      nextCursor: encodeCursor('skill://c'),
    });
  });

  it('walking 1000 items with page size 7 yields each exactly once, in order', () => {
    const items = Array.from({ length: 1000 }, (_, index) => `skill://s/${String(index).padStart(4, '0')}`);
    const pages = walk(items, 7);
    expect(pages.length).toBe(143);
    expect(pages.flat()).toEqual(items);
  });

  it.each([['garbage'], [''], [b64url('skill://a')]])('rejects a bad cursor %j with INVALID_CURSOR', (cursor) => {
    expectInvalidCursor(() => pageOf(letters('abc'), cursor, 2, key));
  });
});
