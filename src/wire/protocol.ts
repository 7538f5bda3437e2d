/**
 * The protocol vocabulary every serving layer shares: the era of a connection, the param schemas of the methods
 * answered from the snapshot, how a client-sent value is echoed in an error, the logger name of diagnostics, and how a
 * client declares the Skills extension (SEP-2640 "Capability"). A leaf: it imports nothing of this project.
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  type ServerContext as RequestContext,
  type StandardSchemaV1,
} from '@modelcontextprotocol/server';
import { SKILLS_EXTENSION_ID } from '@modelcontextprotocol/server/ext/skills';

/** Protocol era of a connection, as the SDK's serving entry decided it. */
export type Era = 'legacy' | 'modern';

/** Longest part of a client's URI echoed back in an error message (characters). */
export const ECHO_MAX_CHARS = 200;

/** A client-sent value, shortened for an error message. */
export function echo(text: string): string {
  return text.length <= ECHO_MAX_CHARS ? text : `${text.slice(0, ECHO_MAX_CHARS)}… (${text.length} characters)`;
}

/** Builds a Standard Schema for params with the given string fields (`?` marks optional ones). */
function stringParams<T extends Record<string, string | undefined>>(
  fields: readonly string[],
): StandardSchemaV1<unknown, T> {
  return {
    '~standard': {
      version: 1,
      vendor: 'skills-serve',
      validate: (value: unknown) => {
        const params = (value ?? {}) as Record<string, unknown>;
        if (typeof params !== 'object' || Array.isArray(params))
          return { issues: [{ message: 'params must be an object' }] };
        const result: Record<string, string> = {};
        for (const field of fields) {
          const optional = field.endsWith('?');
          const name = optional ? field.slice(0, -1) : field;
          const given = params[name];
          if (given === undefined && optional) continue;
          if (typeof given !== 'string')
            return { issues: [{ message: `params.${name} must be a string`, path: [name] }] };
          result[name] = given;
        }
        return { value: result as T };
      },
    },
  };
}

/** `{ uri: string }`. */
export const URI_PARAMS = stringParams<{ uri: string }>(['uri']);
export const LIST_PARAMS = stringParams<{ cursor?: string }>(['cursor?']);
export const DIRECTORY_PARAMS = stringParams<{ uri: string; cursor?: string }>(['uri', 'cursor?']);

/** The logger name of diagnostics sent to hosts as `notifications/message`. */
export const DIAGNOSTICS_LOGGER = 'skills-serve';

/** Whether client capabilities declare the Skills extension (`extensions["io.modelcontextprotocol/skills"]`). */
export function declaresSkillsExtension(capabilities: unknown): boolean {
  if (typeof capabilities !== 'object' || capabilities === null) return false;
  const extensions = (capabilities as { extensions?: unknown }).extensions;
  if (typeof extensions !== 'object' || extensions === null) return false;
  const declared = (extensions as Record<string, unknown>)[SKILLS_EXTENSION_ID];
  return typeof declared === 'object' && declared !== null;
}

/** The client capabilities a 2026-07-28 request carries in its `_meta` envelope (absent in the 2025 era). */
export function envelopeCapabilities(ctx: RequestContext | undefined): unknown {
  const envelope = ctx?.mcpReq.envelope as Record<string, unknown> | undefined;
  return envelope?.[CLIENT_CAPABILITIES_META_KEY];
}

/** Called by the extension's handlers with each request they answer (method name, request context). */
export type ExtensionRequestHook = (method: string, ctx: RequestContext | undefined) => void;
