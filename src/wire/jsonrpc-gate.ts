/**
 * Each stdin line parsed once and judged (pure): blank, a JSON-RPC 2.0 message as the SDK's schema accepts it, or the
 * answer owed to a line the SDK would drop without a word (text that is not JSON, JSON that is not a message, a
 * request whose shape the schema refuses although it carries a usable `id`). The stdio transport
 * (`transports/stdio-wire.ts`) answers each refused line (-32700 Parse error, or -32600 Invalid Request with the
 * request's `id`, or `null` when it has none) and logs it, so a host never waits for an answer that cannot come.
 */
import { INVALID_REQUEST, type JSONRPCMessage, PARSE_ERROR, parseJSONRPCMessage } from '@modelcontextprotocol/server';

/** What to do with one line from stdin. */
export type LineVerdict =
  | { readonly kind: 'blank' }
  | { readonly kind: 'message'; readonly message: JSONRPCMessage }
  /** A response (no `method`) the schema refuses: nothing to answer, only to report. */
  | { readonly kind: 'unusable'; readonly reason: string }
  | {
      readonly kind: 'reject';
      readonly id: string | number | null;
      readonly code: typeof PARSE_ERROR | typeof INVALID_REQUEST;
      readonly message: string;
    };

/** Whether `value` is a JSON object (not `null`, not an array): the shape of a message, `params` and `_meta`. */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Whether `id` is a JSON-RPC request id this server answers to: a string or a safe integer. */
export function isRequestId(id: unknown): id is string | number {
  return typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id));
}

/**
 * Classifies one line (pure).
 *
 * @param line one line of stdin, without its newline.
 * @returns `blank` for JSON whitespace only (space, tab, CR); `message` with the parsed message when the SDK's
 *   JSON-RPC schema accepts it (requests, notifications, responses); otherwise what to answer (`reject`) or, for a
 *   response, `unusable`.
 */
export function classifyLine(line: string): LineVerdict {
  // Blank means JSON whitespace only: `trim()` would also drop U+00A0, U+2028, U+FEFF… and leave the line unanswered.
  if (/^[ \t\r]*$/u.test(line)) return { kind: 'blank' };
  let message: unknown;
  try {
    message = JSON.parse(line);
  } catch {
    return { kind: 'reject', id: null, code: PARSE_ERROR, message: 'Parse error: the line is not JSON' };
  }
  if (Array.isArray(message))
    return {
      kind: 'reject',
      id: null,
      code: INVALID_REQUEST,
      message: 'Invalid Request: JSON-RPC batches are not supported',
    };
  if (!isJsonObject(message))
    return {
      kind: 'reject',
      id: null,
      code: INVALID_REQUEST,
      message: 'Invalid Request: a message must be a JSON object',
    };
  const id = message['id'];
  const usableId = isRequestId(id) ? id : null;
  const problem = shapeProblem(message);
  if (problem !== undefined)
    return { kind: 'reject', id: usableId, code: INVALID_REQUEST, message: `Invalid Request: ${problem}` };
  try {
    return { kind: 'message', message: parseJSONRPCMessage(message) };
  } catch {
    // The schema is stricter than the checks above (unknown top-level keys, a `progressToken` that is not a string
    // or an integer, …): the SDK would drop the line, so it is answered here.
    if (!('method' in message)) return { kind: 'unusable', reason: 'a response that does not match the schema' };
    return {
      kind: 'reject',
      id: usableId,
      code: INVALID_REQUEST,
      message: 'Invalid Request: the message does not match the JSON-RPC 2.0 schema',
    };
  }
}

function shapeProblem(message: Record<string, unknown>): string | undefined {
  if (message['jsonrpc'] !== '2.0') return '"jsonrpc" must be "2.0"';
  const isResponse = !('method' in message) && ('result' in message || 'error' in message);
  if (isResponse) return undefined;
  if (typeof message['method'] !== 'string') return '"method" must be a string';
  if ('id' in message && !isRequestId(message['id'])) return '"id" must be a string or an integer';
  if ('params' in message) {
    const params = message['params'];
    if (!isJsonObject(params)) return '"params" must be an object';
    if ('_meta' in params && !isJsonObject(params['_meta'])) return '"params._meta" must be an object';
  }
  return undefined;
}
