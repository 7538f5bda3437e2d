/**
 * A gate in front of the stdio transport for lines the SDK would drop without a word: text that is not JSON, JSON
 * that is not a JSON-RPC 2.0 message, and requests whose shape is wrong although they carry a usable `id`. Every
 * such line is answered (-32700 Parse error, or -32600 Invalid Request with the request's `id`) and logged, so a
 * host never waits for an answer that cannot come (issue "Hardening": robustness). Valid lines pass unchanged.
 */
import { Transform, type TransformCallback } from 'node:stream';

/** What to do with one line from stdin. */
export type LineVerdict =
  | { readonly kind: 'pass' }
  | { readonly kind: 'reject'; readonly id: string | number | null; readonly code: -32700 | -32600; readonly message: string };

/** Lines longer than this are passed through unchecked (the transport enforces its own limit on them). */
export const GATE_MAX_LINE_CHARS = 10 * 1024 * 1024;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Classifies one line (pure).
 *
 * @param line one line of stdin, without its newline.
 * @returns `pass` for blank lines (JSON whitespace: space, tab, CR) and well-formed JSON-RPC 2.0 messages (requests, notifications, responses);
 *   otherwise the error to answer.
 */
export function classifyLine(line: string): LineVerdict {
  // Blank means JSON whitespace only: `trim()` would also drop U+00A0, U+2028, U+FEFF… and leave the line unanswered.
  if (/^[ \t\r]*$/u.test(line)) return { kind: 'pass' };
  let message: unknown;
  try {
    message = JSON.parse(line);
  } catch {
    return { kind: 'reject', id: null, code: -32700, message: 'Parse error: the line is not JSON' };
  }
  if (Array.isArray(message)) return { kind: 'reject', id: null, code: -32600, message: 'Invalid Request: JSON-RPC batches are not supported' };
  if (!isObject(message)) return { kind: 'reject', id: null, code: -32600, message: 'Invalid Request: a message must be a JSON object' };
  const id = message['id'];
  const usableId = typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id)) ? id : null;
  const problem = shapeProblem(message);
  if (problem === undefined) return { kind: 'pass' };
  return { kind: 'reject', id: usableId, code: -32600, message: `Invalid Request: ${problem}` };
}

function shapeProblem(message: Record<string, unknown>): string | undefined {
  if (message['jsonrpc'] !== '2.0') return '"jsonrpc" must be "2.0"';
  const isResponse = !('method' in message) && ('result' in message || 'error' in message);
  if (isResponse) return undefined;
  if (typeof message['method'] !== 'string') return '"method" must be a string';
  if ('id' in message) {
    const id = message['id'];
    if (!(typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id)))) return '"id" must be a string or an integer';
  }
  if ('params' in message) {
    const params = message['params'];
    if (!isObject(params)) return '"params" must be an object';
    if ('_meta' in params && !isObject(params['_meta'])) return '"params._meta" must be an object';
  }
  return undefined;
}

/**
 * A stream between stdin and the transport: passes valid lines through and hands rejected ones to `onReject`
 * (which answers them) instead.
 *
 * @param onReject called once per rejected line, in order.
 */
export function createJsonRpcGate(onReject: (verdict: Extract<LineVerdict, { kind: 'reject' }>, line: string) => void): Transform {
  let partial = '';
  return new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
      const text = partial + chunk.toString('utf8');
      const lines = text.split('\n');
      partial = lines.pop() ?? '';
      if (partial.length > GATE_MAX_LINE_CHARS) {
        // Too long to hold: let the transport see it (and apply its own limit).
        lines.push(partial);
        partial = '';
        callback(null, `${lines.join('\n')}`);
        return;
      }
      const kept: string[] = [];
      for (const line of lines) {
        const verdict = classifyLine(line.endsWith('\r') ? line.slice(0, -1) : line);
        if (verdict.kind === 'pass') kept.push(line);
        else onReject(verdict, line);
      }
      callback(null, kept.length === 0 ? '' : `${kept.join('\n')}\n`);
    },
    flush(callback: TransformCallback) {
      callback(null, partial);
    },
  });
}
