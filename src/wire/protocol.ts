/**
 * The protocol vocabulary every serving layer shares: the era of a connection, the param schemas of the methods
 * answered from the snapshot, how a client-sent value is echoed in an error, and the logger name of diagnostics. A
 * leaf: it imports nothing of this project.
 */
import type { StandardSchemaV1 } from '@modelcontextprotocol/server';

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
