/**
 * Logging to stderr (fd 2) with pino, synchronously so nothing is lost on exit (docs/ARCHITECTURE.md, "Invariants":
 * stdout is the protocol).
 */
import pino, { type Logger } from 'pino';

export type { Logger } from 'pino';

/** Accepted `--log-level` values. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * The `--log-level` used when none is given: `warn` when a host runs the server over stdio (stderr is a pipe or a
 * file), `info` otherwise (a terminal, or `--http`, whose startup lines say where it listens). Hosts show a stdio
 * server's stderr as failure: Claude Code 2.1.332 records every stderr line in its MCP log as an error
 * (`"error":"Server stderr: …"`), so routine startup lines read as errors there; Gemini CLI 0.61.0 shows stderr only
 * with `--debug`. At `warn`, a clean start writes nothing and every diagnostic still does (they are warnings, and
 * also reach hosts as `notifications/message`).
 *
 * @param stdio whether the server speaks stdio (no `--http`).
 * @param stderrIsTerminal whether fd 2 is a TTY.
 */
export function defaultLogLevel(stdio: boolean, stderrIsTerminal: boolean): LogLevel {
  return stdio && !stderrIsTerminal ? 'warn' : 'info';
}

/**
 * A pino logger writing JSON lines to fd 2.
 *
 * @param level minimum level to write.
 * @param destination file descriptor (default 2, stderr); tests may pass another.
 */
export function createLogger(level: LogLevel, destination = 2): Logger {
  return pino(
    { name: 'skills-serve', level, base: { pid: process.pid } },
    pino.destination({ dest: destination, sync: true }),
  );
}
