/** The stdin gate: which lines are messages for the SDK and which are answered with -32700 / -32600. */
import { describe, expect, it } from 'vitest';

import { classifyLine } from '../../src/wire/jsonrpc-gate.js';

describe('classifyLine', () => {
  it.each([
    ['', { kind: 'blank' }],
    ['   ', { kind: 'blank' }],
    [
      '{"jsonrpc":"2.0","id":1,"method":"ping"}',
      { kind: 'message', message: JSON.parse('{"jsonrpc":"2.0","id":1,"method":"ping"}') as unknown },
    ],
    [
      '{"jsonrpc":"2.0","id":"a","method":"skills/list","params":{"cursor":"x"}}',
      {
        kind: 'message',
        message: JSON.parse('{"jsonrpc":"2.0","id":"a","method":"skills/list","params":{"cursor":"x"}}') as unknown,
      },
    ],
    [
      '{"jsonrpc":"2.0","method":"notifications/initialized"}',
      { kind: 'message', message: JSON.parse('{"jsonrpc":"2.0","method":"notifications/initialized"}') as unknown },
    ],
    [
      '{"jsonrpc":"2.0","id":3,"result":{}}',
      { kind: 'message', message: JSON.parse('{"jsonrpc":"2.0","id":3,"result":{}}') as unknown },
    ],
    [
      '{"jsonrpc":"2.0","id":3,"error":{"code":1,"message":"x"}}',
      { kind: 'message', message: JSON.parse('{"jsonrpc":"2.0","id":3,"error":{"code":1,"message":"x"}}') as unknown },
    ],
    ['{not json', { kind: 'reject', id: null, code: -32700, message: 'Parse error: the line is not JSON' }],
    // Whitespace that JSON does not allow is not a blank line: answered, never dropped in silence.
    ['\u00a0', { kind: 'reject', id: null, code: -32700, message: 'Parse error: the line is not JSON' }],
    ['\u2028', { kind: 'reject', id: null, code: -32700, message: 'Parse error: the line is not JSON' }],
    ['\ufeff', { kind: 'reject', id: null, code: -32700, message: 'Parse error: the line is not JSON' }],
    ['\u000b\u000c', { kind: 'reject', id: null, code: -32700, message: 'Parse error: the line is not JSON' }],
    [' \t ', { kind: 'blank' }],
    [
      '[{"jsonrpc":"2.0","id":1,"method":"ping"}]',
      { kind: 'reject', id: null, code: -32600, message: 'Invalid Request: JSON-RPC batches are not supported' },
    ],
    ['42', { kind: 'reject', id: null, code: -32600, message: 'Invalid Request: a message must be a JSON object' }],
    [
      '{"jsonrpc":"1.0","id":7,"method":"ping"}',
      { kind: 'reject', id: 7, code: -32600, message: 'Invalid Request: "jsonrpc" must be "2.0"' },
    ],
    [
      '{"id":7,"method":"ping"}',
      { kind: 'reject', id: 7, code: -32600, message: 'Invalid Request: "jsonrpc" must be "2.0"' },
    ],
    [
      '{"jsonrpc":"2.0","id":"x","method":42}',
      { kind: 'reject', id: 'x', code: -32600, message: 'Invalid Request: "method" must be a string' },
    ],
    [
      '{"jsonrpc":"2.0","id":1.5,"method":"ping"}',
      { kind: 'reject', id: null, code: -32600, message: 'Invalid Request: "id" must be a string or an integer' },
    ],
    [
      '{"jsonrpc":"2.0","id":2,"method":"skills/get","params":"skill://a/SKILL.md"}',
      { kind: 'reject', id: 2, code: -32600, message: 'Invalid Request: "params" must be an object' },
    ],
    [
      '{"jsonrpc":"2.0","id":2,"method":"skills/get","params":null}',
      { kind: 'reject', id: 2, code: -32600, message: 'Invalid Request: "params" must be an object' },
    ],
    [
      '{"jsonrpc":"2.0","id":2,"method":"x","params":{"_meta":"s"}}',
      { kind: 'reject', id: 2, code: -32600, message: 'Invalid Request: "params._meta" must be an object' },
    ],
    // Shapes only the SDK's schema refuses: a request is answered with its id, a response only reported.
    [
      '{"jsonrpc":"2.0","id":1,"method":"ping","extra":1}',
      {
        kind: 'reject',
        id: 1,
        code: -32600,
        message: 'Invalid Request: the message does not match the JSON-RPC 2.0 schema',
      },
    ],
    [
      '{"jsonrpc":"2.0","id":2,"method":"ping","params":{"_meta":{"progressToken":1.5}}}',
      {
        kind: 'reject',
        id: 2,
        code: -32600,
        message: 'Invalid Request: the message does not match the JSON-RPC 2.0 schema',
      },
    ],
    [
      '{"jsonrpc":"2.0","method":"notifications/x","extra":1}',
      {
        kind: 'reject',
        id: null,
        code: -32600,
        message: 'Invalid Request: the message does not match the JSON-RPC 2.0 schema',
      },
    ],
    [
      '{"jsonrpc":"2.0","id":3,"result":{},"x":1}',
      { kind: 'unusable', reason: 'a response that does not match the schema' },
    ],
  ])('%j', (line, verdict) => {
    expect(classifyLine(line)).toEqual(verdict);
  });
});
