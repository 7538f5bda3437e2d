/**
 * The resolved configuration: built once by `cli.ts` from argv and env, frozen, read by everything else
 * (docs/ARCHITECTURE.md, "Invariants": config is resolved once). Pure.
 */
import path from 'node:path';
import type { SymlinkPolicy } from './index/policy.js';
import type { RootSpec } from './index/types.js';
import type { LogLevel } from './log.js';
import type { SourceSpec } from './roots/root-arg.js';
import type { GitSettings } from './roots/sources.js';

/** `--compat`: surfaces for hosts without the Skills extension (instructions, tools, prompts). */
export const COMPAT_MODES = ['auto', 'on', 'off'] as const;
export type CompatMode = (typeof COMPAT_MODES)[number];

/** `--cache-scope`: who may cache `skills/list` and `skills/get` results (2026-07-28 `cacheScope`). */
export const CACHE_SCOPES = ['private', 'public'] as const;
export type CacheScope = (typeof CACHE_SCOPES)[number];

/**
 * `--resources`: what `resources/list` lists: every served file (the default: Claude Code 2.1.332 and Gemini CLI
 * 0.61.0 offer listed resources as `@` mentions, took 10,000 of them, and put none in the model's context), or each
 * skill's `SKILL.md` only.
 */
export const RESOURCE_LIST_MODES = ['files', 'skills'] as const;
export type ResourceListMode = (typeof RESOURCE_LIST_MODES)[number];

export interface Config {
  /** Roots in command-line order (folders and git roots); earlier roots win conflicts. */
  readonly sources: readonly SourceSpec[];
  /** How git roots are fetched and followed. */
  readonly git: GitSettings;
  /** `--ttl`: the `ttlMs` of 2026-07-28 `skills/list`/`skills/get` results; `undefined`: chosen from the sources. */
  readonly ttlMs: number | undefined;
  readonly cacheScope: CacheScope;
  readonly logLevel: LogLevel;
  /** Entries per `skills/list` and `resources/directory/read` page. */
  readonly pageSize: number;
  /** Follow changes on disk (`--no-watch` turns it off). */
  readonly watch: boolean;
  /** Poll every this many ms instead of using native file events (`--poll [ms]`); `undefined`: native. */
  readonly pollMs: number | undefined;
  /** `--strict`: any diagnostic of the first build makes startup fail (exit 1), for CI. */
  readonly strict: boolean;
  /** Symlink policy (`--symlinks within|skip|follow`). */
  readonly symlinks: SymlinkPolicy;
  /** `--http [host:]port`: serve Streamable HTTP instead of stdio. */
  readonly http?: HttpEndpoint;
  /** `--http-token`: bearer token every HTTP request must carry. */
  readonly httpToken?: string;
  /** `--http-tokens FILE`: per-team tokens, each with the skill-path prefixes it may see. */
  readonly httpTokens?: string;
  /**
   * `auto`: offer compat tools/prompts only to clients that do not declare the extension; `on`: always; `off`: never.
   */
  readonly compat: CompatMode;
  /** `--instructions-max`: bound of the compat `instructions` text, in UTF-16 code units. */
  readonly instructionsMax: number;
  /**
   * `--instructions-wait`: longest `initialize` waits for the first index build, so the instructions list the catalog
   * (ms).
   */
  readonly instructionsWaitMs: number;
  /** `--resources`: what `resources/list` lists. */
  readonly resources: ResourceListMode;
}

/**
 * Parses one root argument: `dir`, or `prefix=dir` to mount `dir` under an organizational prefix
 * (`acme/billing=./billing-skills` serves its skills as `skill://acme/billing/<skill>/…`). An argument starting
 * with `/`, `./` or `../` is always a directory, so paths holding `=` stay usable.
 *
 * @param arg the argument as typed.
 * @param cwd directory relative paths are resolved against.
 * @returns the root with an absolute `dir` and the prefix segments.
 * @throws RangeError when the prefix is empty or holds an empty, `.` or `..` segment.
 */
export function parseRootArg(arg: string, cwd: string): RootSpec {
  const equals = arg.indexOf('=');
  // An absolute or explicitly relative path is a directory even when it holds '=' (`/srv/build=42/skills`).
  const plainPath = path.isAbsolute(arg) || arg.startsWith('./') || arg.startsWith('../') || arg.startsWith('.\\');
  if (equals === -1 || plainPath) return Object.freeze({ dir: path.resolve(cwd, arg), prefix: Object.freeze([]) });
  const prefixText = arg.slice(0, equals);
  const dirText = arg.slice(equals + 1);
  const prefix = prefixText.split('/');
  if (
    dirText === '' ||
    prefix.some((segment) => segment === '' || segment === '.' || segment === '..' || segment.includes('\0'))
  ) {
    throw new RangeError(
      `root "${arg}" must be a directory or prefix=directory, with a prefix of non-empty "/"-separated names (e.g. acme/billing=./skills)`,
    );
  }
  return Object.freeze({ dir: path.resolve(cwd, dirText), prefix: Object.freeze(prefix) });
}

/** Where `--http` listens. */
export interface HttpEndpoint {
  readonly host: string;
  /** TCP port; 0 picks a free one (logged). */
  readonly port: number;
}

/** Host `--http <port>` binds to when none is given: this machine only. */
export const DEFAULT_HTTP_HOST = '127.0.0.1';

/**
 * Parses `--http`: `port`, `host:port`, `[ipv6]:port` or `:port`.
 *
 * @returns host (default {@link DEFAULT_HTTP_HOST}, IPv6 without brackets) and port 0-65535.
 * @throws RangeError naming the accepted forms.
 */
export function parseHttpEndpoint(text: string): HttpEndpoint {
  const match = /^(?:(\[[\da-fA-F:.]+\]|[^:[\]]+)?:)?(\d{1,5})$/u.exec(text.trim());
  const port = Number(match?.[2]);
  if (match === null || port > 65_535)
    throw new RangeError(`--http must be port, host:port or [ipv6]:port with a port from 0 to 65535 (got "${text}")`);
  const host = match[1] === undefined || match[1] === '' ? DEFAULT_HTTP_HOST : match[1].replace(/^\[(.*)\]$/u, '$1');
  return { host, port };
}

/** Default `--page-size`. */
export const DEFAULT_PAGE_SIZE = 100;
/** Largest accepted `--page-size`. */
export const MAX_PAGE_SIZE = 10_000;
/** Polling interval used by a bare `--poll` (ms). */
export const DEFAULT_POLL_MS = 1000;

/**
 * Parses an integer option value.
 *
 * @param text the value as typed.
 * @param flag the option name for the message (`--page-size`).
 * @param min smallest accepted value.
 * @param max largest accepted value.
 * @returns the integer.
 * @throws RangeError naming the flag and the accepted range.
 */
export function parseIntegerOption(text: string, flag: string, min: number, max: number): number {
  const value = Number(text);
  if (!/^\d+$/u.test(text.trim()) || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new RangeError(`${flag} must be an integer from ${min} to ${max} (got "${text}")`);
  }
  return value;
}

/** Parses `--page-size`: 1…{@link MAX_PAGE_SIZE} entries. @throws RangeError otherwise. */
export const parsePageSize = (text: string): number => parseIntegerOption(text, '--page-size', 1, MAX_PAGE_SIZE);

/** Largest `--ttl` (ms): one day. */
export const MAX_TTL_MS = 86_400_000;

/** Parses `--ttl`: 0…{@link MAX_TTL_MS} ms. @throws RangeError otherwise. */
export const parseTtlMs = (text: string): number => parseIntegerOption(text, '--ttl', 0, MAX_TTL_MS);

/**
 * Default `--instructions-max`: the strictest bound seen in a host. Claude Code 2.1.332 cuts server instructions at
 * 4,096 characters (its `CLAUDE_CODE_MAX_MCP_DESCRIPTION_LENGTH` default) and appends `… [truncated]`.
 */
export const DEFAULT_INSTRUCTIONS_MAX = 4096;
/** Smallest accepted `--instructions-max`: room for the introduction, the pointer to the tools and a few skills. */
export const MIN_INSTRUCTIONS_MAX = 1024;
/** Largest accepted `--instructions-max`. */
export const MAX_INSTRUCTIONS_MAX = 1_000_000;

/**
 * Default `--instructions-wait` (ms). Any catalog small enough to fit the instructions is indexed well within it; the
 * strictest host deadline seen is Gemini CLI 0.61.0's 5,000 ms for `gemini mcp list` (Claude Code 2.1.332 waits 30 s).
 */
export const DEFAULT_INSTRUCTIONS_WAIT_MS = 2000;
/** Largest accepted `--instructions-wait` (ms). */
export const MAX_INSTRUCTIONS_WAIT_MS = 30_000;

/** Parses `--instructions-wait`: 0…{@link MAX_INSTRUCTIONS_WAIT_MS} ms. @throws RangeError otherwise. */
export const parseInstructionsWait = (text: string): number =>
  parseIntegerOption(text, '--instructions-wait', 0, MAX_INSTRUCTIONS_WAIT_MS);

/**
 * Parses `--instructions-max`: {@link MIN_INSTRUCTIONS_MAX}…{@link MAX_INSTRUCTIONS_MAX} characters.
 * @throws RangeError otherwise.
 */
export const parseInstructionsMax = (text: string): number =>
  parseIntegerOption(text, '--instructions-max', MIN_INSTRUCTIONS_MAX, MAX_INSTRUCTIONS_MAX);

/** Parses `--poll`: 50…60000 ms. @throws RangeError otherwise. */
export const parsePollMs = (text: string): number => parseIntegerOption(text, '--poll', 50, 60_000);
