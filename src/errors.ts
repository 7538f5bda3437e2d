/**
 * Domain errors with string codes, and the one table that maps them to JSON-RPC error codes and exit codes
 * (docs/ARCHITECTURE.md, "Errors"). Messages name `skill://` URIs, never host paths. Unknown skills, files and directories are
 * answered where they are looked up (`server/source.ts`, `server/resource-read.ts`) with the SDK's -32602.
 */

/** Every domain error code. */
export type ErrorCode = 'INVALID_CURSOR' | 'ROOT_UNUSABLE' | 'CONFIG_INVALID';

/** JSON-RPC: Invalid params. */
export const INVALID_PARAMS = -32602;
/** JSON-RPC: Internal error. */
export const INTERNAL_ERROR = -32603;

const TABLE: Readonly<Record<ErrorCode, { rpc: number; exit: number }>> = {
  INVALID_CURSOR: { rpc: INVALID_PARAMS, exit: 1 },
  ROOT_UNUSABLE: { rpc: INTERNAL_ERROR, exit: 1 },
  CONFIG_INVALID: { rpc: INTERNAL_ERROR, exit: 2 },
};

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
export function rpcCodeOf(code: ErrorCode): number {
  return TABLE[code].rpc;
}

/** Process exit code for a domain error code (config errors 2, everything else 1). */
export function exitCodeOf(code: ErrorCode): number {
  return TABLE[code].exit;
}
