/**
 * The server's stderr log as data: pino JSON lines, one per record, each with an `event` field naming what happened
 * (`serving`, `index-built`, `index-updated`, `watching`, `reindex`, `diagnostic`, `rejected`, …) and the fields that
 * go with it. Tests match events and fields, never the human-readable `msg`, which may be reworded freely.
 *
 * Plain-text lines a user reads on stderr for a CLI error (`skills-serve: …`) are messages, not logs: tests assert
 * those as text.
 */
import { isDeepStrictEqual } from 'node:util';

import { WAIT_MS, waitFor } from './wait.js';

/** One parsed stderr log line (pino JSON). */
export type LogLine = Record<string, unknown> & {
  readonly event?: string;
  readonly level?: number;
  readonly msg?: string;
};

/** Fields a log line must carry, each compared with deep equality (`{ code: -32600, id: null }`). */
export type LogFields = Readonly<Record<string, unknown>>;

/**
 * Every complete JSON-object line of `stderr`, parsed, in order. Other lines (plain text, a line still being
 * written) are left out.
 */
export function logLines(stderr: string): LogLine[] {
  return stderr.split('\n').flatMap((line) => {
    if (!line.startsWith('{')) return [];
    try {
      const record: unknown = JSON.parse(line);
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- tsc needs it (object)
      return typeof record === 'object' && record !== null && !Array.isArray(record) ? [record as LogLine] : [];
    } catch {
      return [];
    }
  });
}

/**
 * A reader of a growing stderr's log lines that parses each line once (for loops that check the log after every
 * step). Returns the same array, grown, on each call.
 *
 * @param stderr reads everything the server wrote to stderr so far.
 */
export function logReader(stderr: () => string): () => readonly LogLine[] {
  const lines: LogLine[] = [];
  let consumed = 0;
  return () => {
    const text = stderr();
    const end = text.lastIndexOf('\n') + 1;
    if (end > consumed) {
      lines.push(...logLines(text.slice(consumed, end)));
      consumed = end;
    }
    return lines;
  };
}

/** Whether `line` is an `event` line carrying every field of `fields` with an equal value. */
export function isEvent(line: LogLine, event: string, fields: LogFields = {}): boolean {
  return line.event === event && Object.entries(fields).every(([key, value]) => isDeepStrictEqual(line[key], value));
}

/** The log lines of `stderr` (a string, or parsed lines) that are `event` lines carrying `fields`. */
export function eventsOf(stderr: string | readonly LogLine[], event: string, fields: LogFields = {}): LogLine[] {
  return (typeof stderr === 'string' ? logLines(stderr) : stderr).filter((line) => isEvent(line, event, fields));
}

/** Whether `stderr` (a string, or parsed lines) holds an `event` line carrying `fields`. */
export function hasEvent(stderr: string | readonly LogLine[], event: string, fields: LogFields = {}): boolean {
  return eventsOf(stderr, event, fields).length > 0;
}

export interface WaitForEventOptions {
  /** Give up after this long (ms); default {@link WAIT_MS}. */
  readonly timeoutMs?: number;
  /** Only lines after the first `after` log lines count (a count taken earlier with `logLines(stderr).length`). */
  readonly after?: number;
}

/**
 * Resolves with the first `event` line carrying `fields` that `stderr()` holds (now or later).
 *
 * @param stderr reads everything the server wrote to stderr so far.
 * @throws Error naming the event, the fields and the whole stderr when none appears within the bound.
 */
export async function waitForEvent(
  stderr: () => string,
  event: string,
  fields: LogFields = {},
  options: WaitForEventOptions = {},
): Promise<LogLine> {
  let found: LogLine | undefined;
  await waitFor(
    () => (found = eventsOf(logLines(stderr()).slice(options.after ?? 0), event, fields)[0]) !== undefined,
    {
      timeoutMs: options.timeoutMs ?? WAIT_MS,
      describe: () =>
        `no stderr log line with event ${JSON.stringify(event)} and fields ${JSON.stringify(fields)}; stderr:\n${stderr()}`,
    },
  );
  return found as LogLine;
}
