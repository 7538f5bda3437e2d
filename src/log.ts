/**
 * Logging to stderr (fd 2) with pino, synchronously so nothing is lost on exit (docs/ARCHITECTURE.md, "Invariants": stdout is the protocol).
 */
import pino, { type Logger } from 'pino';

export type { Logger } from 'pino';

/** Accepted `--log-level` values. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

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
