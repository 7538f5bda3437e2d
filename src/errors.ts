/**
 * Domain errors with string codes, and the one table that maps each code to its JSON-RPC error code, how a tool call
 * reports it, and the process exit code (docs/ARCHITECTURE.md, "Errors"). Messages name `skill://` URIs, never host
 * paths. Handlers throw domain errors; `toProtocolError` and `toToolError` are the only translations.
 */
import { INTERNAL_ERROR, INVALID_PARAMS, ProtocolError } from '@modelcontextprotocol/server';

/**
 * Every domain error code, with its JSON-RPC code (for a request), whether a tool result may show its message to
 * the model (`tool`), and the exit code (for the CLI).
 */
const TABLE = {
  /** `skills/get` of a URI that is not a served skill's `SKILL.md`. */
  SKILL_NOT_FOUND: { rpc: INVALID_PARAMS, tool: true, exit: 1 },
  /** A read of a URI that is not a served file. */
  RESOURCE_NOT_FOUND: { rpc: INVALID_PARAMS, tool: true, exit: 1 },
  /** A directory read of something that is not a directory resource. */
  NOT_A_DIRECTORY: { rpc: INVALID_PARAMS, tool: true, exit: 1 },
  /** A file read of a directory resource. */
  IS_A_DIRECTORY: { rpc: INVALID_PARAMS, tool: true, exit: 1 },
  /** A URI that is not a well-formed `skill://` URI. */
  INVALID_URI: { rpc: INVALID_PARAMS, tool: true, exit: 1 },
  /** A cursor this server did not issue. */
  INVALID_CURSOR: { rpc: INVALID_PARAMS, tool: true, exit: 1 },
  /** A served file could not be read (the reason is logged, not sent). */
  READ_FAILED: { rpc: INTERNAL_ERROR, tool: true, exit: 1 },
  /** A served file kept changing while it was read and re-indexed. */
  FILE_CHANGING: { rpc: INTERNAL_ERROR, tool: true, exit: 1 },
  /** A root (folder or git source) that cannot be served. */
  ROOT_UNUSABLE: { rpc: INTERNAL_ERROR, tool: false, exit: 1 },
  /** A configuration error (flags, environment, root arguments). */
  CONFIG_INVALID: { rpc: INTERNAL_ERROR, tool: false, exit: 2 },
} as const satisfies Readonly<Record<string, { rpc: number; tool: boolean; exit: number }>>;

/** Every domain error code. */
export type ErrorCode = keyof typeof TABLE;

/** An expected failure with a stable code. `message` is safe to send to clients. */
export class SkillsServeError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'SkillsServeError';
  }
}

/** JSON-RPC error code for a domain error code. */
function rpcCodeOf(code: ErrorCode): number {
  return TABLE[code].rpc;
}

/** Process exit code for a domain error code (configuration errors 2, everything else 1). */
export function exitCodeOf(code: ErrorCode): number {
  return TABLE[code].exit;
}

/**
 * The JSON-RPC error a request answers with.
 *
 * @param error anything a handler threw.
 * @param onUnexpected told about anything that is neither a domain error nor a `ProtocolError` (a bug, or a failure
 *   nobody mapped): the caller logs it with its stack, and the client gets -32603 `Internal error`, never the raw
 *   message (which may name a host path).
 * @returns a domain error's code and message; a `ProtocolError` as it is; otherwise -32603 `Internal error`.
 */
export function toProtocolError(error: unknown, onUnexpected: (error: unknown) => void): ProtocolError {
  if (error instanceof SkillsServeError) return new ProtocolError(rpcCodeOf(error.code), error.message);
  if (error instanceof ProtocolError) return error;
  onUnexpected(error);
  return new ProtocolError(INTERNAL_ERROR, 'Internal error');
}

/**
 * What a tool result says about a failure the model can act on (MCP "Tools", "Error handling": an `isError` result).
 *
 * @returns the message, or `undefined` when the error is not one to show (a bug, a configuration error).
 */
export function toToolError(error: unknown): string | undefined {
  if (error instanceof SkillsServeError) return TABLE[error.code].tool ? error.message : undefined;
  return error instanceof ProtocolError ? error.message : undefined;
}

/**
 * Runs `action`, throwing what it throws as {@link toProtocolError} maps it.
 *
 * @param onUnexpected as for {@link toProtocolError}.
 */
export async function asProtocolErrors<T>(
  action: () => T | Promise<T>,
  onUnexpected: (error: unknown) => void,
): Promise<T> {
  try {
    return await action();
  } catch (error) {
    throw toProtocolError(error, onUnexpected);
  }
}
