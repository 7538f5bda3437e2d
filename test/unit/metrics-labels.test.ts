/** The labels `/metrics` counts under: a JSON-RPC error at the start of a response chunk, its code, the outcome. */
import { describe, expect, it } from 'vitest';

import { errorCodeLabel, jsonRpcErrorCode, outcomeLabel } from '../../src/transports/metrics.js';

describe('jsonRpcErrorCode', () => {
  it.each([
    // The SDK's two orders: id before error (a handler's error), error before id (a rejection by the entry).
    ['{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"No skill"}}', -32602],
    ['{"jsonrpc":"2.0","error":{"code":-32020,"message":"Bad Request"},"id":9}', -32020],
    ['{"jsonrpc":"2.0","id":"req-1","error":{"code":-32601,"message":"Method not found"}}', -32601],
    ['{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}', -32700],
    ['{"error":{"code":-1}}', -1],
    // One server-sent event.
    ['event: message\ndata: {"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"x"}}\n\n', -32602],
    ['id: 3\nevent: message\ndata:{"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"x"}}\n\n', -32603],
    // Results never match, whatever they hold.
    ['{"result":{"contents":[{"text":"{\\"error\\":{\\"code\\":-32602}}"}]},"jsonrpc":"2.0","id":1}', undefined],
    ['{"jsonrpc":"2.0","id":1,"result":{"error":{"code":-32602}}}', undefined],
    ['event: message\ndata: {"result":{},"jsonrpc":"2.0","id":1}\n\n', undefined],
    // A notification before the result, and the middle of a long body.
    ['event: message\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{}}\n\n', undefined],
    ['"error":{"code":-32602}', undefined],
    ['', undefined],
    // An id too long to be looked at within the first bytes: not recognized (counted as it was answered).
    [`{"jsonrpc":"2.0","id":"${'x'.repeat(300)}","error":{"code":-32602}}`, undefined],
  ])('%j', (chunk, expected) => {
    expect(jsonRpcErrorCode(chunk)).toBe(expected);
    expect(jsonRpcErrorCode(Buffer.from(chunk))).toBe(expected);
  });
});

describe('errorCodeLabel and outcomeLabel', () => {
  it.each([
    [-32602, '-32602'],
    [-32601, '-32601'],
    [-32042, '-32042'],
    [-1, 'other'],
    [-32099, 'other'],
    [0, 'other'],
  ])('code %d is %j', (code, label) => {
    expect(errorCodeLabel(code)).toBe(label);
  });

  it.each([
    [200, undefined, 'ok'],
    [200, -32602, 'error'],
    [202, undefined, 'ok'],
    [400, -32020, 'client_error'],
    [401, undefined, 'unauthorized'],
    [500, -32603, 'server_error'],
  ])('status %d with error %j is %j', (status, code, outcome) => {
    expect(outcomeLabel(status, code)).toBe(outcome);
  });
});
