/** `--http` parsing, loopback detection and the gate's reading of static tokens. */
import { describe, expect, it } from 'vitest';

import { parseHttpEndpoint } from '../../src/cli/options.js';
import { isLoopbackHost } from '../../src/loopback.js';
import { Gate } from '../../src/transports/auth/gate.js';
import { StaticToken } from '../../src/transports/http-tokens.js';

describe('parseHttpEndpoint', () => {
  it.each([
    ['3000', { host: '127.0.0.1', port: 3000 }],
    [':3000', { host: '127.0.0.1', port: 3000 }],
    ['0', { host: '127.0.0.1', port: 0 }],
    ['0.0.0.0:8080', { host: '0.0.0.0', port: 8080 }],
    ['localhost:65535', { host: 'localhost', port: 65535 }],
    ['[::1]:3000', { host: '::1', port: 3000 }],
    ['[::]:80', { host: '::', port: 80 }],
  ])('%j', (text, expected) => {
    expect(parseHttpEndpoint(text)).toEqual(expected);
  });

  it.each(['', 'abc', '70000', 'host:', 'host:-1', '::1:3000', 'a:b:3000', '3000.5'])('refuses %j', (text) => {
    expect(() => parseHttpEndpoint(text)).toThrow(RangeError);
  });
});

describe('isLoopbackHost', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.1.2.3', true],
    ['localhost', true],
    ['::1', true],
    ['0.0.0.0', false],
    ['::', false],
    ['10.0.0.5', false],
    ['example.com', false],
  ])('%s → %s', (host, expected) => {
    expect(isLoopbackHost(host)).toBe(expected);
  });
});

describe('the gate with --http-token', () => {
  const connection = {};
  const warnings: string[] = [];
  const gate = new Gate([new StaticToken('tok', (message) => warnings.push(message))]);
  it.each([
    ['Bearer tok', 'admitted'],
    ['bearer tok', 'admitted'],
    ['Bearer   tok', 'admitted'],
    ['Bearer tok2', 'unknown_token'],
    ['Bearer to', 'unknown_token'],
    ['Basic tok', 'malformed'],
    ['tok', 'malformed'],
    ['Bearer tok, Bearer tok', 'malformed'],
    ['', 'missing'],
    [undefined, 'missing'],
    [`Bearer ${'a'.repeat(8 * 1024 + 1)}`, 'too_long'],
  ])('%j → %s', (header, expected) => {
    const verdict = gate.authorize(header, connection) as { ok: boolean; reason?: string };
    expect(verdict.ok ? 'admitted' : verdict.reason).toBe(expected);
  });

  it('takes a token outside the bearer grammar only as exactly "Bearer <token>", with one deprecation warning', () => {
    const told: string[] = [];
    const legacy = new Gate([new StaticToken('p@ss word!', (message) => told.push(message))]);
    const outcome = (header: string): string => {
      const verdict = legacy.authorize(header, {}) as { ok: boolean; reason?: string };
      return verdict.ok ? 'admitted' : (verdict.reason as string);
    };
    expect([outcome('Bearer p@ss word!'), outcome('bearer p@ss word!'), outcome('Bearer p@ss')]).toEqual([
      'admitted',
      'malformed',
      'unknown_token',
    ]);
    expect(told).toEqual([
      '--http-token holds characters a bearer token may not (RFC 6750 §2.1 allows A-Z a-z 0-9 - . _ ~ + / and trailing =): it is still accepted as "Authorization: Bearer <token>", exactly, but is deprecated and will be refused in 0.3; use a token such as the output of "openssl rand -base64 32"',
    ]);
    expect(warnings).toEqual([]);
  });

  it('words a refusal one way: realm, error code, JSON-RPC body', () => {
    expect(gate.failures).toEqual(['missing', 'malformed', 'too_long', 'unknown_token']);
    expect(gate.refusal('unknown_token')).toEqual({
      status: 401,
      headers: {
        'content-type': 'application/json',
        'www-authenticate':
          'Bearer realm="skills-serve", error="invalid_token", error_description="the token is not one this server accepts"',
      },
      body: '{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Unauthorized: the token is not one this server accepts"}}',
    });
  });
});
