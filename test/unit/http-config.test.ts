/** `--http` parsing, loopback detection and the bearer-token check. */
import { describe, expect, it } from 'vitest';

import { parseHttpEndpoint } from '../../src/cli/options.js';
import { hasBearerToken, isLoopbackHost } from '../../src/transports/http.js';

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

describe('hasBearerToken', () => {
  it.each([
    ['Bearer tok', true],
    ['bearer tok', true],
    ['Bearer  tok ', true],
    ['Bearer tok2', false],
    ['Bearer to', false],
    ['Basic tok', false],
    ['tok', false],
    [undefined, false],
  ])('%j → %s', (header, expected) => {
    expect(hasBearerToken(header, 'tok')).toBe(expected);
  });
});
