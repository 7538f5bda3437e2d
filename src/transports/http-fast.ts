/**
 * The HTTP fast path: a stateless 2025-era POST of one of the Skills extension's four read methods is answered here,
 * straight from the snapshot's pre-serialized entries, without building a server instance, a web `Request`/`Response`
 * and a stream per request (docs/ARCHITECTURE.md, "Transports"). The answer is byte for byte what the SDK's stateless
 * path sends (status, headers, SSE framing, JSON key order; `test/e2e/http-fast.test.ts` compares the two). Anything
 * else — another method, a batch, an envelope, a bad shape, an error answer, a body without `content-length` — goes
 * the ordinary way, with the body handed on as read.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

import {
  announcesDiagnostics,
  answerSkillsMethod,
  parseSkillsParams,
  SKILLS_METHODS,
  type SkillsHandlerContext,
  type SkillsMethod,
} from '../server/skills-handlers.js';
import { isJsonObject, isRequestId } from '../wire/jsonrpc-gate.js';
import { DIAGNOSTICS_LOGGER } from '../wire/protocol.js';
import { partChunks, RawJson, serializeParts } from '../wire/raw-json.js';

/** Largest body the fast path reads itself (bytes); the four methods' requests are far smaller. */
export const FAST_BODY_MAX_BYTES = 64 * 1024;

/** The 2025-era revisions the SDK's stateless path serves (`mcp-protocol-version` header). */
const LEGACY_VERSIONS = new Set(['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25']);

/** The headers the SDK's stateless path answers a POST with (an SSE stream of one message). */
const SSE_HEADERS = {
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  'content-type': 'text/event-stream',
  'x-accel-buffering': 'no',
} as const;

/** A request the fast path declined, with its body already read: to be served the ordinary way. */
export interface Declined {
  readonly body: Buffer | undefined;
}

/**
 * Answers `req` if it is a fast-path request.
 *
 * @param seen told the method of a request the fast path parsed (for metrics and the access log).
 * @returns `undefined` when it was answered; otherwise the body read so far (`undefined`: nothing was read).
 */
export async function tryFastPath(
  req: IncomingMessage,
  res: ServerResponse,
  context: SkillsHandlerContext,
  seen?: { method?: string },
): Promise<Declined | undefined> {
  const { headers } = req;
  const length = Number(headers['content-length']);
  const accept = headers.accept ?? '';
  const eligible =
    req.method === 'POST' &&
    Number.isSafeInteger(length) &&
    length > 0 &&
    length <= FAST_BODY_MAX_BYTES &&
    /^application\/json\s*(?:;|$)/iu.test(headers['content-type'] ?? '') &&
    LEGACY_VERSIONS.has(String(headers['mcp-protocol-version'])) &&
    accept.includes('application/json') &&
    accept.includes('text/event-stream');
  if (!eligible) return { body: undefined };
  const body = await readBody(req);
  const request = parseRequest(body);
  if (request === undefined) return { body };
  if (seen !== undefined) seen.method = request.method;
  let result: Record<string, unknown>;
  try {
    result = await answerSkillsMethod(request.method, request.params, 'legacy', context);
  } catch {
    return { body }; // error answers are the SDK's to word
  }
  res.writeHead(200, SSE_HEADERS);
  if (context.diagnostics !== undefined && announcesDiagnostics(request.method, request.params)) {
    // What the SDK's handler sends with ctx.mcpReq.log, in its order: each diagnostic, then the result.
    for (const data of context.diagnostics()) {
      const notification = {
        jsonrpc: '2.0',
        method: 'notifications/message',
        params: { level: 'warning', data, logger: DIAGNOSTICS_LOGGER },
      };
      res.write(`event: message\ndata: ${JSON.stringify(notification)}\n\n`);
    }
  }
  const pieces = serializeParts({ result, jsonrpc: '2.0', id: request.id });
  if (pieces.every((piece) => typeof piece === 'string' || (piece instanceof RawJson && piece.bytes === undefined))) {
    // Text only: one write (headers and body in one packet, no chunk per piece).
    res.end(
      `event: message\ndata: ${pieces.map((piece) => (typeof piece === 'string' ? piece : (piece as RawJson).text)).join('')}\n\n`,
    );
    return undefined;
  }
  res.write('event: message\ndata: ');
  for (const chunk of partChunks(pieces)) res.write(chunk);
  res.end('\n\n');
  return undefined;
}

/** Reads the body (Node's parser holds it to `content-length`, which the caller bounded). */
async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * The request as the SDK's Node adapter reads it, with its body already read: `method`, `url`, `headers` and the
 * body as the only chunk.
 */
export function replayRequest(
  req: IncomingMessage,
  body: Buffer,
): {
  method?: string;
  url?: string;
  headers: IncomingMessage['headers'];
  [Symbol.asyncIterator](): AsyncGenerator<Buffer>;
} {
  return {
    method: req.method,
    url: req.url,
    headers: req.headers,
    async *[Symbol.asyncIterator]() {
      yield body;
    },
  };
}

/** A single JSON-RPC request for one of the four methods, with params in the exact accepted shape, or `undefined`. */
function parseRequest(
  body: Buffer,
): { id: string | number; method: SkillsMethod; params: { uri?: string; cursor?: string } } | undefined {
  let message: unknown;
  try {
    message = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  if (!isJsonObject(message)) return undefined;
  const { jsonrpc, id, method, params } = message;
  const keys = Object.keys(message);
  if (jsonrpc !== '2.0' || keys.some((key) => !['jsonrpc', 'id', 'method', 'params'].includes(key))) return undefined;
  if (!isRequestId(id)) return undefined;
  if (!(SKILLS_METHODS as readonly unknown[]).includes(method)) return undefined;
  const parsed = parseSkillsParams(method as SkillsMethod, params);
  return parsed === undefined ? undefined : { id, method: method as SkillsMethod, params: parsed };
}
