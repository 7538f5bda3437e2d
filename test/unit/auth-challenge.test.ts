/**
 * The pure parts of the OAuth resource server: bearer syntax (RFC 6750 §2.1), where metadata lives (RFC 9728 §3.1),
 * the challenges (RFC 6750 §3), the scopes of a token, and claims to views.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { challenge, parseBearer, resourceMetadataUrl, statusOf } from '../../src/transports/auth/challenge.js';
import { ClaimViews, parseClaimsFile } from '../../src/transports/auth/claims.js';
import { scopesOf } from '../../src/transports/auth/verify.js';

describe('parseBearer', () => {
  it.each([
    [undefined, 'missing'],
    ['', 'missing'],
    ['Bearer abc.def-ghi_~+/==', { token: 'abc.def-ghi_~+/==' }],
    ['bearer abc', { token: 'abc' }],
    ['Bearer  abc', { token: 'abc' }],
    ['Bearer', 'malformed'],
    ['Bearer ', 'malformed'],
    ['Bearer a b', 'malformed'],
    ['Bearer a=b', 'malformed'],
    ['Basic YWJjOmRlZg==', 'malformed'],
    ['Bearerabc', 'malformed'],
    ['Bearer abc, Bearer def', 'malformed'],
    ['Bearer "abc"', 'malformed'],
    [`Bearer ${'a'.repeat(8192)}`, { token: 'a'.repeat(8192) }],
    [`Bearer ${'a'.repeat(8193)}`, 'too_long'],
    [`bearer ${'a'.repeat(10_000)}`, 'too_long'],
    [`Basic ${'a'.repeat(10_000)}`, 'malformed'],
  ] as const)('%j → %j', (header, expected) => {
    expect(parseBearer(header)).toEqual(expected);
  });
});

describe('resourceMetadataUrl', () => {
  it.each([
    ['https://skills.acme.com/mcp', 'https://skills.acme.com/.well-known/oauth-protected-resource/mcp'],
    ['https://skills.acme.com/', 'https://skills.acme.com/.well-known/oauth-protected-resource'],
    ['http://127.0.0.1:8080/a/mcp', 'http://127.0.0.1:8080/.well-known/oauth-protected-resource/a/mcp'],
  ])('%s → %s', (resource, expected) => {
    expect(resourceMetadataUrl(resource)).toBe(expected);
  });
});

describe('challenge', () => {
  const url = 'https://h/.well-known/oauth-protected-resource/mcp';
  it.each([
    ['missing', 401, `Bearer resource_metadata="${url}"`],
    [
      'expired',
      401,
      `Bearer resource_metadata="${url}", error="invalid_token", error_description="the token has expired"`,
    ],
    ['insufficient_scope', 403, `Bearer resource_metadata="${url}", error="insufficient_scope", scope="skills:read x"`],
    ['no_view', 403, `Bearer resource_metadata="${url}", error="insufficient_scope", scope="skills:read x"`],
  ] as const)('%s → %i %s', (failure, status, header) => {
    expect(statusOf(failure)).toBe(status);
    expect(challenge(failure, { metadataUrl: url, scopes: ['skills:read', 'x'] })).toBe(header);
  });
});

describe('scopesOf', () => {
  it.each([
    [{ scope: 'a b  c' }, ['a', 'b', 'c']],
    [{ scp: ['a', 'b'] }, ['a', 'b']],
    [{ scp: 'a' }, ['a']],
    [{ scope: 42 }, []],
    [{}, []],
  ])('%j → %j', (claims, expected) => {
    expect([...scopesOf(claims)]).toEqual(expected);
  });
});

describe('claims to views', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  const file = (value: unknown): string => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'claims-'));
    dirs.push(dir);
    const at = path.join(dir, 'claims.json');
    writeFileSync(at, JSON.stringify(value));
    return at;
  };
  const views = new ClaimViews(
    file({
      claims: [
        { name: 'billing', claim: 'groups', value: 'billing', prefixes: ['acme/billing'] },
        { name: 'shared', claim: 'roles', value: 'staff', prefixes: ['shared', 'acme/billing'] },
        { name: 'all', claim: 'scope', value: 'skills:all', prefixes: ['*'] },
        { name: 'kc', claim: 'realm_access.roles', value: 'admin', prefixes: ['ops'] },
      ],
    }),
  );

  it('a token sees the union of its entries, one view object per prefix set', () => {
    const a = views.viewOf({ groups: ['billing'], roles: ['staff'] });
    const b = views.viewOf({ roles: 'staff', groups: ['billing', 'other'] });
    expect(a).toEqual({ name: 'billing+shared', prefixes: [['acme', 'billing'], ['shared']] });
    expect(b).toBe(a);
    expect(views.viewOf({ scope: 'openid skills:all' })?.prefixes).toEqual([[]]);
    expect(views.viewOf({ realm_access: { roles: ['admin'] } })?.prefixes).toEqual([['ops']]);
    expect(views.viewOf({ groups: ['nobody'] })).toBeUndefined();
    expect(views.viewOf({ groups: 'billing-archive' })).toBeUndefined();
    expect(views.viewOf({ 'realm_access.roles': ['admin'] })).toBeUndefined();
  });

  it.each([
    [{}, 'expected { "claims": [ { "name", "claim", "value", "prefixes" }, … ] } with at least one entry'],
    [{ claims: [{ claim: 'groups', value: 'a', prefixes: ['x'] }] }, 'claims[0]: "name" must be a non-empty string'],
    [
      { claims: [{ name: 'n', claim: 'a..b', value: 'a', prefixes: ['x'] }] },
      'n: "claim" must be a claim name or a dotted path (groups, realm_access.roles)',
    ],
    [{ claims: [{ name: 'n', claim: 'groups', value: '', prefixes: ['x'] }] }, 'n: "value" must be a non-empty string'],
    [
      { claims: [{ name: 'n', claim: 'groups', value: 'a', prefixes: [] }] },
      'n: "prefixes" must be a non-empty list of skill-path prefixes (or "*")',
    ],
    [{ claims: [{ name: 'n', claim: 'groups', value: 'a', prefixes: ['/'] }] }, 'n: a prefix is empty'],
  ])('refuses %j', (value, message) => {
    expect(() => parseClaimsFile(JSON.stringify(value))).toThrow(message);
  });
});
