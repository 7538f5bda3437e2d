/**
 * `resources/read` for `skill://` URIs, checked on the URI exactly as the client sent it (SEP-2640
 * "resources/read"; issue "Hardening": hostile URIs get -32602).
 *
 * The SDK's own handler parses the URI with WHATWG `URL` first, which resolves dot segments and strips controls,
 * so `skill://s/references/../SKILL.md` would silently read `skill://s/SKILL.md`; and its parameter validation
 * reports a wrong type as an internal error. This handler replaces it after the extension is attached.
 */
import { ProtocolError, ProtocolErrorCode, type McpServer, type StandardSchemaV1 } from '@modelcontextprotocol/server';
import type { SkillSource } from '@modelcontextprotocol/server/ext/skills';
import { parseSkillUri } from '../index/uri.js';

/** Longest part of a client's URI echoed back in an error message (characters). */
export const ECHO_MAX_CHARS = 200;

/** `{ uri: string }`, as a Standard Schema: anything else is -32602 before the handler runs. */
export const URI_PARAMS: StandardSchemaV1<unknown, { uri: string }> = {
  '~standard': {
    version: 1,
    vendor: 'skills-serve',
    validate: (value: unknown) => {
      const uri = (value as { uri?: unknown } | null | undefined)?.uri;
      return typeof uri === 'string' ? { value: { uri } } : { issues: [{ message: 'params.uri must be a string', path: ['uri'] }] };
    },
  },
};

/** A client-sent value, shortened for an error message. */
export function echo(text: string): string {
  return text.length <= ECHO_MAX_CHARS ? text : `${text.slice(0, ECHO_MAX_CHARS)}… (${text.length} characters)`;
}

/**
 * Installs the `resources/read` handler on `server` (call after `SkillsExtension.attach`).
 *
 * @param server a server not yet connected.
 * @param source the skill source: `read` returns the verified content or `undefined`.
 * @throws nothing itself; the handler answers -32602 for a malformed, non-canonical or unknown URI.
 */
export function serveResourceRead(server: McpServer, source: SkillSource): void {
  server.server.setRequestHandler('resources/read', { params: URI_PARAMS }, async ({ uri }, ctx) => {
    if (parseSkillUri(uri) === undefined) {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `${echo(uri)} is not a skill:// URI this server can serve`);
    }
    // The low-level handler's context is the one McpServer hands its own resource callbacks (typed separately).
    const result = await source.read(uri, ctx as never);
    if (result === undefined) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Resource not found: ${echo(uri)}`);
    const mimeType = result.mimeType === undefined ? {} : { mimeType: result.mimeType };
    const content = 'text' in result ? { uri, ...mimeType, text: result.text } : { uri, ...mimeType, blob: Buffer.from(result.bytes).toString('base64') };
    return { contents: [content] };
  });
}
