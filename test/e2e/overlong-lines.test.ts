/**
 * Overlong input on stdio: a line over the limit (10 MiB) is answered with a
 * JSON-RPC error whose id is null, discarded as it streams (never buffered whole), and the server keeps serving;
 * memory stays bounded whatever the host sends.
 *
 * The stdio wire (`src/transports/stdio-wire.ts`) frames lines as they stream and discards an overlong one as it
 * arrives.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { makeTree, removeTree, skillMd } from '../helpers/tree.js';
import { errorOf, type Message, spawnWire, stopAll, type Wire } from '../helpers/wire.js';

const MiB = 1024 * 1024;
/** Peak resident set the server may reach while a host streams 60 MiB at it. */
const RSS_BOUND_KB = 150 * 1024;

let root: string;
beforeAll(async () => {
  root = await makeTree({ 'alpha/SKILL.md': skillMd('alpha', 'A skill.'), 'alpha/notes.md': 'notes\n' });
});
afterEach(() => stopAll());
afterAll(() => removeTree(root));

async function start(): Promise<Wire> {
  const wire = spawnWire({ args: ['--no-watch', root] });
  await wire.handshake();
  return wire;
}

/** An id-null error response saying the line was too long. */
const isOverlongError = (message: Message): boolean => message['id'] === null && errorOf(message) !== undefined;

function expectOverlongError(message: Message): void {
  const error = errorOf(message);
  expect(error?.code, JSON.stringify(message)).toBeGreaterThanOrEqual(-32700);
  expect(error?.code).toBeLessThanOrEqual(-32600);
  expect(error?.message).toMatch(/too long|too large|exceed|limit|maximum/iu);
}

/** Writes `total` bytes of `fill` in 1 MiB chunks, waiting for the pipe each time; calls `sample` after each chunk. */
async function stream(wire: Wire, total: number, fill: string, sample: () => void = () => undefined): Promise<void> {
  const chunk = Buffer.alloc(MiB, fill);
  for (let sent = 0; sent < total; sent += MiB) {
    await wire.write(sent + MiB <= total ? chunk : chunk.subarray(0, total - sent));
    sample();
  }
}

/** Counts the id-null errors received so far. */
const nullErrors = (wire: Wire): number => wire.messages.filter(isOverlongError).length;

describe('a line over the stdio limit', () => {
  it('a 20 MiB JSON-RPC request on one line gets one error with id null, and the ping after it is answered', async () => {
    const wire = await start();
    const id = wire.nextId();
    const head = `{"jsonrpc":"2.0","id":"${id}","method":"ping","params":{"pad":"`;
    await wire.write(head);
    await stream(wire, 20 * MiB, 'x');
    await wire.write('"}}\n');
    const answer = await wire.request('ping', undefined, 30_000);
    expect(answer['result']).toEqual({});
    expectOverlongError(await wire.waitFor(isOverlongError, 5_000));
    expect(nullErrors(wire)).toBe(1);
    // The overlong request itself is not answered: its id was never read.
    expect(wire.responses(id)).toEqual([]);
    expect(wire.badLines).toEqual([]);
  }, 60_000);

  it('60 MiB without a newline, then a newline and a ping: one error with id null, the ping answered, peak RSS under 150 MB', async () => {
    const wire = await start();
    let maxRssKb = 0;
    await stream(wire, 60 * MiB, 'y', () => {
      maxRssKb = Math.max(maxRssKb, wire.status().rssKb);
    });
    await wire.write('\n');
    expect((await wire.request('ping', undefined, 30_000))['result']).toEqual({});
    expectOverlongError(await wire.waitFor(isOverlongError, 5_000));
    expect(nullErrors(wire)).toBe(1);
    const { hwmKb } = wire.status();
    expect(
      Math.max(maxRssKb, hwmKb),
      `peak RSS ${Math.round(hwmKb / 1024)} MiB, sampled max ${Math.round(maxRssKb / 1024)} MiB`,
    ).toBeLessThan(RSS_BOUND_KB);
    expect(wire.badLines).toEqual([]);
  }, 60_000);

  it('overlong lines between valid requests: each overlong line one id-null error, every valid request answered, in order of sending', async () => {
    const wire = await start();
    const ids: string[] = [];
    const ping = (): Promise<void> => {
      const id = wire.nextId();
      ids.push(id);
      return wire.write(`${JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' })}\n`);
    };
    await ping();
    await stream(wire, 11 * MiB, 'a');
    await wire.write('\n');
    await ping();
    // Overlong garbage that is not even JSON.
    await stream(wire, 15 * MiB, '{');
    await wire.write('\n');
    await ping();
    for (const id of ids) expect((await wire.waitFor((message) => message['id'] === id, 30_000))['result']).toEqual({});
    await wire.waitFor(() => nullErrors(wire) >= 2, 5_000);
    expect(nullErrors(wire)).toBe(2);
    for (const message of wire.messages.filter(isOverlongError)) expectOverlongError(message);
    expect(ids.map((id) => wire.responses(id).length)).toEqual([1, 1, 1]);
    expect(wire.badLines).toEqual([]);
  }, 60_000);
});
