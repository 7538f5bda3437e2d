/**
 * Fault injection on the process and its pipes: the server stopped and continued
 * (SIGSTOP / SIGCONT) in the middle of a large response, a host that stops reading stdout mid-response, and a host
 * that vanishes mid-response (its end of stdout closed: the server's next write fails with EPIPE), which must end
 * in a clean exit: code 0 within a bound, and no stack trace on stderr.
 */
import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import path from 'node:path';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { converge, listAll } from '../helpers/converge.js';
import { sha256 } from '../helpers/disk.js';
import { waitFor } from '../helpers/live.js';
import { eventsOf, waitForEvent } from '../helpers/logs.js';
import { makeTree, removeTree, skillMd } from '../helpers/tree.js';
import { bytesOfRead, hasStackTrace, spawnWire, stopAll, type Wire } from '../helpers/wire.js';

/** A blob whose response line (base64) is ~11 MB: many pipe buffers, many event-loop turns to write. */
const BLOB_BYTES = 8 * 1024 * 1024;
const BLOB_URI = 'skill://big/blob.bin';

let root: string;
let blob: Buffer;
beforeAll(async () => {
  blob = randomBytes(BLOB_BYTES);
  root = await makeTree({
    'big/SKILL.md': skillMd('big', 'A skill with a large binary.'),
    'big/blob.bin': blob,
    'small/SKILL.md': skillMd('small', 'A small skill.'),
    'small/notes.md': 'small notes v1\n',
  });
});
afterEach(() => stopAll());
afterAll(() => removeTree(root));

async function start(flags: readonly string[] = []): Promise<Wire> {
  const wire = spawnWire({ args: [...flags, root] });
  await wire.handshake();
  if (!flags.includes('--no-watch')) await waitForEvent(wire.stderr, 'watching');
  await listAll(wire);
  return wire;
}

/** Resolves once `bytes` more bytes arrived on the server's stdout. */
function stdoutBytes(wire: Wire, bytes: number): Promise<void> {
  let seen = 0;
  return new Promise((resolve) => {
    const onData = (chunk: Buffer): void => {
      seen += chunk.length;
      if (seen < bytes) return;
      wire.child.stdout?.off('data', onData);
      resolve();
    };
    wire.child.stdout?.on('data', onData);
  });
}

/** Sends a request, returning its id (the answer is collected by the wire). */
function send(wire: Wire, method: string, params: unknown): string {
  const id = wire.nextId();
  wire.send({ jsonrpc: '2.0', id, method, params });
  return id;
}

async function expectAllAnswered(wire: Wire, ids: readonly string[]): Promise<void> {
  await waitFor(() => ids.every((id) => wire.responses(id).length > 0), {
    timeoutMs: 30_000,
    describe: () => wire.stderr().slice(-1500),
  });
  expect((await wire.request('ping'))['result']).toEqual({});
  expect(ids.map((id) => wire.responses(id).length).filter((count) => count !== 1)).toEqual([]);
}

async function restoreSmall(): Promise<void> {
  await fsp.writeFile(path.join(root, 'small', 'notes.md'), 'small notes v1\n');
}

describe('the server stopped mid-stream', () => {
  afterEach(restoreSmall);

  it('SIGSTOP during a large response, requests and an edit while stopped, SIGCONT: everything answered once, bytes intact, the edit followed', async () => {
    const wire = await start();
    const started = stdoutBytes(wire, 256 * 1024);
    const ids = [
      ...Array.from({ length: 3 }, () => send(wire, 'resources/read', { uri: BLOB_URI })),
      ...Array.from({ length: 10 }, () => send(wire, 'resources/read', { uri: 'skill://small/SKILL.md' })),
    ];
    await started;
    wire.child.kill('SIGSTOP');
    await waitFor(() => wire.status().state === 'T');
    // While it is stopped: the tree changes and the host keeps sending (the pipe holds the lines).
    await fsp.writeFile(path.join(root, 'small', 'notes.md'), 'small notes v2, written while the server was stopped\n');
    ids.push(...Array.from({ length: 10 }, () => send(wire, 'skills/get', { uri: 'skill://small/SKILL.md' })));
    wire.child.kill('SIGCONT');
    await waitFor(() => wire.status().state !== 'T');

    await expectAllAnswered(wire, ids);
    for (const id of ids.slice(0, 3))
      expect(sha256(bytesOfRead(wire.responses(id)[0] as Record<string, unknown>))).toBe(sha256(blob));
    await converge(wire, root);
    expect(bytesOfRead(await wire.request('resources/read', { uri: 'skill://small/notes.md' })).toString()).toContain(
      'v2',
    );
    expect(wire.badLines).toEqual([]);
  });

  it('a host that stops reading stdout mid-response: the server keeps indexing meanwhile, and every answer arrives intact once it reads again', async () => {
    const wire = await start();
    const started = stdoutBytes(wire, 256 * 1024);
    const ids = Array.from({ length: 4 }, () => send(wire, 'resources/read', { uri: BLOB_URI }));
    await started;
    wire.child.stdout?.pause();
    const updates = eventsOf(wire.stderr(), 'index-updated').length;
    await fsp.writeFile(
      path.join(root, 'small', 'notes.md'),
      'small notes v2, written while the host was not reading\n',
    );
    ids.push(...Array.from({ length: 10 }, () => send(wire, 'skills/get', { uri: 'skill://small/SKILL.md' })));
    // Its stdout is full, yet the server goes on: the edit is indexed (stderr is still read).
    await waitFor(() => eventsOf(wire.stderr(), 'index-updated').length > updates, {
      describe: () => wire.stderr().slice(-1500),
    });
    wire.child.stdout?.resume();

    await expectAllAnswered(wire, ids);
    for (const id of ids.slice(0, 4))
      expect(sha256(bytesOfRead(wire.responses(id)[0] as Record<string, unknown>))).toBe(sha256(blob));
    expect(bytesOfRead(await wire.request('resources/read', { uri: 'skill://small/notes.md' })).toString()).toContain(
      'v2',
    );
    expect(wire.badLines).toEqual([]);
  });
});

describe('the host vanishing', () => {
  it('its end of stdout closed during a large response (EPIPE), stdin left open: exit 0, no stack trace on stderr', async () => {
    const wire = await start(['--no-watch']);
    const started = stdoutBytes(wire, 256 * 1024);
    for (let index = 0; index < 3; index++) send(wire, 'resources/read', { uri: BLOB_URI });
    await started;
    wire.child.stdout?.destroy();
    const { code, signal } = await wire.exited(undefined, 'the exit after EPIPE on stdout');
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    expect(hasStackTrace(wire.stderr()), `stderr:\n${wire.stderr()}`).toBe(false);
  });

  it('its end of stdout closed while idle, then a request (the answer meets EPIPE): exit 0, no stack trace on stderr', async () => {
    const wire = await start(['--no-watch']);
    wire.child.stdout?.destroy();
    send(wire, 'ping', {});
    const { code, signal } = await wire.exited(undefined, 'the exit after EPIPE on stdout');
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    expect(hasStackTrace(wire.stderr()), `stderr:\n${wire.stderr()}`).toBe(false);
  });

  it('all three pipes closed during a large response (the host process died): exit 0', async () => {
    const wire = await start();
    const started = stdoutBytes(wire, 256 * 1024);
    for (let index = 0; index < 3; index++) send(wire, 'resources/read', { uri: BLOB_URI });
    await started;
    wire.child.stdout?.destroy();
    wire.child.stderr?.destroy();
    wire.child.stdin?.destroy();
    expect(await wire.exited(undefined, 'the exit after the host vanished')).toEqual({ code: 0, signal: null });
  });

  it('stderr closed (logs go nowhere), then requests that log and stdin end: still served, exit 0', async () => {
    const wire = await start(['--no-watch']);
    wire.child.stderr?.destroy();
    // An unknown file logs nothing on stdout but may warn on stderr; a missing one does.
    const answer = await wire.request('resources/read', { uri: 'skill://small/nope.md' });
    expect(answer['error']).toEqual({ code: -32602, message: 'Resource not found: skill://small/nope.md' });
    await fsp.rm(path.join(root, 'small', 'notes.md'));
    try {
      expect((await wire.request('resources/read', { uri: 'skill://small/notes.md' }))['error']).toEqual({
        code: -32602,
        message: 'Resource not found: skill://small/notes.md',
      });
      expect((await wire.request('ping'))['result']).toEqual({});
    } finally {
      await restoreSmall();
    }
    wire.child.stdin?.end();
    expect(await wire.exited()).toEqual({ code: 0, signal: null });
  });
});
