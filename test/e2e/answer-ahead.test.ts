/**
 * Answering `initialize` ahead of the bundle (`transports/answer-ahead.ts`), over real stdio: the first start records
 * the SDK's answer in `<cache>/start/`; the next start with the same command line, environment and host params sends
 * it before loading the rest, and the SDK's own answer is neither written twice nor lost when it differs.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { REPO } from '../helpers/paths.js';
import { SAMPLE_SKILL_URIS } from '../helpers/sample.js';
import { waitFor } from '../helpers/wait.js';
import { errorOf, type Message, resultOf, spawnWire, stopAll, type Wire } from '../helpers/wire.js';

const SAMPLE = path.join(REPO, 'sample-skills');

interface RecordFile {
  version: number;
  key: string;
  answers: Record<string, string>;
}

function start(cacheDir: string, extra: readonly string[] = [], keepLines = false): Wire {
  return spawnWire({
    args: [SAMPLE, '--cache-dir', cacheDir, ...extra],
    env: { SKILLS_SERVE_LOG_LEVEL: 'debug' },
    keepLines,
  });
}

/** A new cache directory holding the record of one start's `initialize` answer. */
async function recorded(): Promise<string> {
  const cacheDir = newCacheDir();
  const first = start(cacheDir);
  await session(first);
  await first.stop();
  return cacheDir;
}

function records(cacheDir: string): Array<{ file: string; record: RecordFile }> {
  const dir = path.join(cacheDir, 'start');
  return readdirSync(dir)
    .sort()
    .map((name) => ({
      file: path.join(dir, name),
      record: JSON.parse(readFileSync(path.join(dir, name), 'utf8')) as RecordFile,
    }));
}

/** The handshake, then one complete `skills/list`: the URIs listed. */
async function session(wire: Wire): Promise<{ initialize: Message; uris: string[] }> {
  const initialize = await wire.handshake();
  const list = resultOf<{ skills: Array<{ uri: string }> }>(await wire.request('skills/list', {}));
  return { initialize, uris: list.skills.map((skill) => skill.uri) };
}

/** The stop signals the process catches (`SigCgt` of `/proc/<pid>/status`; empty once it is gone). */
function caughtSignals(pid: number): string[] {
  try {
    const mask = BigInt(
      `0x${/^SigCgt:\s*([0-9a-f]+)$/mu.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? '0'}`,
    );
    return (
      [
        ['SIGHUP', 1],
        ['SIGINT', 2],
        ['SIGTERM', 15],
      ] as const
    ).flatMap(([name, number]) => ((mask >> BigInt(number - 1)) & 1n ? [name] : []));
  } catch {
    return [];
  }
}

const aheadLogs = (wire: Wire): string[] =>
  wire
    .logs()
    .map((line) => String(line['event']))
    .filter((event) => event.startsWith('initialize-'));

/** Cache directories made by this file, removed after each test once its servers are stopped. */
const cacheDirs: string[] = [];
function newCacheDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ahead-'));
  cacheDirs.push(dir);
  return dir;
}

afterEach(async () => {
  await stopAll();
  for (const dir of cacheDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('answering initialize ahead', () => {
  it('records the first answer, sends it ahead on the next start, and writes it once', async () => {
    const cacheDir = newCacheDir();
    const first = start(cacheDir);
    const one = await session(first);
    await first.stop();
    expect(aheadLogs(first)).toEqual([]);
    const [recorded] = records(cacheDir);
    expect(records(cacheDir)).toHaveLength(1);
    expect(Object.values(recorded?.record.answers ?? {})).toEqual([JSON.stringify(one.initialize['result'])]);
    expect(Object.keys(recorded?.record.answers ?? {})).toEqual([
      JSON.stringify({
        protocolVersion: '2025-11-25',
        capabilities: {},
        clientInfo: { name: 'raw-e2e', version: '1.0.0' },
      }),
    ]);

    const second = start(cacheDir);
    const two = await session(second);
    await second.stop();
    expect(aheadLogs(second)).toEqual(['initialize-answered-ahead']);
    expect(two.initialize).toEqual({ jsonrpc: '2.0', id: 'w1', result: one.initialize['result'] });
    expect(second.responses('w1')).toHaveLength(1);
    expect(two.uris).toEqual(SAMPLE_SKILL_URIS);
    expect(second.badLines).toEqual([]);
  });

  it('sends what the record says, then records the SDK answer again when it differs', async () => {
    const cacheDir = newCacheDir();
    const first = start(cacheDir);
    const truth = (await session(first)).initialize['result'] as Record<string, unknown>;
    await first.stop();
    const [{ file, record }] = records(cacheDir) as [{ file: string; record: RecordFile }];
    const [params] = Object.keys(record.answers) as [string];
    writeFileSync(
      file,
      JSON.stringify({ ...record, answers: { [params]: JSON.stringify({ ...truth, instructions: 'tampered' }) } }),
    );

    const second = start(cacheDir);
    const told = await session(second);
    await second.stop();
    expect((told.initialize['result'] as Record<string, unknown>)['instructions']).toBe('tampered');
    expect(aheadLogs(second)).toEqual(['initialize-answered-ahead', 'initialize-ahead-differs']);
    expect(second.responses('w1')).toHaveLength(1);
    expect(told.uris).toEqual(SAMPLE_SKILL_URIS);
    expect(records(cacheDir)[0]?.record.answers).toEqual({ [params]: JSON.stringify(truth) });

    const third = start(cacheDir);
    expect((await session(third)).initialize['result']).toEqual(truth);
    await third.stop();
    expect(aheadLogs(third)).toEqual(['initialize-answered-ahead']);
  });

  it('answers other host params and other command lines through the SDK, and records each', async () => {
    const cacheDir = newCacheDir();
    const first = start(cacheDir);
    await session(first);
    await first.stop();

    const otherHost = start(cacheDir);
    otherHost.send({
      jsonrpc: '2.0',
      id: 7,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'other-host', version: '2' } },
    });
    const answer = await otherHost.waitFor((message) => message['id'] === 7);
    await otherHost.stop();
    expect((answer['result'] as Record<string, unknown>)['protocolVersion']).toBe('2025-06-18');
    expect(aheadLogs(otherHost)).toEqual([]);
    expect(Object.keys(records(cacheDir)[0]?.record.answers ?? {})).toHaveLength(2);

    const otherLine = start(cacheDir, ['--no-watch']);
    await session(otherLine);
    await otherLine.stop();
    expect(aheadLogs(otherLine)).toEqual([]);
    expect(records(cacheDir)).toHaveLength(2);
  });

  it('hands every byte read ahead to the wire: a bad first line, then initialize', async () => {
    const cacheDir = newCacheDir();
    const first = start(cacheDir);
    await session(first);
    await first.stop();

    const second = start(cacheDir);
    await second.write('not json\n');
    const { initialize, uris } = await session(second);
    await second.stop();
    expect(second.messages[0]).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32700, message: expect.stringContaining('Parse error') as unknown },
    });
    expect(aheadLogs(second)).toEqual([]);
    expect(initialize['id']).toBe('w1');
    expect(uris).toEqual(SAMPLE_SKILL_URIS);
  });

  it('stops gracefully, exit 0, on a signal that comes before the rest has loaded', async () => {
    const cacheDir = newCacheDir();
    const first = start(cacheDir);
    await session(first);
    await first.stop();

    const second = start(cacheDir);
    await second.handshake();
    second.child.kill('SIGTERM');
    expect(await second.exited()).toEqual({ code: 0, signal: null });
    expect(aheadLogs(second)).toEqual(['initialize-answered-ahead']);
    expect(second.logs().filter((line) => line['event'] === 'stopping')).toMatchObject([{ reason: 'SIGTERM' }]);
  });

  it('leaves a first line the SDK refuses to the SDK: one answer, the refusal', async () => {
    const cacheDir = await recorded();
    const init = {
      jsonrpc: '2.0',
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw-e2e', version: '1.0.0' } },
    };
    const extra = start(cacheDir);
    extra.send({ ...init, id: 1, extra: 1 });
    extra.send({ jsonrpc: '2.0', id: 2, method: 'ping' });
    await extra.waitFor((message) => message['id'] === 2);
    await extra.stop();
    expect(extra.responses(1).map((message) => errorOf(message)?.code)).toEqual([-32600]);
    expect(aheadLogs(extra)).toEqual([]);

    const bigId = start(cacheDir);
    await bigId.write(`${JSON.stringify({ ...init, id: 0 }).replace('"id":0', '"id":12345678901234567890')}\n`);
    bigId.send({ jsonrpc: '2.0', id: 2, method: 'ping' });
    await bigId.waitFor((message) => message['id'] === 2);
    await bigId.stop();
    expect(bigId.messages.filter((message) => 'result' in message && message['id'] !== 2)).toEqual([]);
    expect(aheadLogs(bigId)).toEqual([]);
  });

  it('answers two initialize lines read at once once each', async () => {
    const cacheDir = await recorded();
    const server = start(cacheDir);
    const params = {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'raw-e2e', version: '1.0.0' },
    };
    await server.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params })}\n${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'initialize', params })}\n`,
    );
    await server.waitFor((message) => message['id'] === 2);
    server.send({ jsonrpc: '2.0', id: 3, method: 'ping' });
    await server.waitFor((message) => message['id'] === 3);
    await server.stop();
    expect(server.messages.map((message) => message['id'])).toEqual([1, 2, 3]);
    expect(aheadLogs(server)).toEqual(['initialize-answered-ahead']);
  });

  it('never sends a recorded answer that is not one JSON object', async () => {
    const cacheDir = await recorded();
    const [{ file, record }] = records(cacheDir) as [{ file: string; record: RecordFile }];
    const [params] = Object.keys(record.answers) as [string];
    for (const forged of ['not json{', '{}}\n{"jsonrpc":"2.0","id":99,"result":{}', '[1]']) {
      writeFileSync(file, JSON.stringify({ ...record, answers: { [params]: forged } }));
      const server = start(cacheDir, [], true);
      const { initialize } = await session(server);
      await server.stop();
      expect(server.badLines).toEqual([]);
      expect(server.messages.map((message) => message['id'])).toEqual(['w1', 'w2']);
      expect((initialize['result'] as Record<string, unknown>)['serverInfo']).toEqual({
        name: 'skills-serve',
        version: expect.any(String) as unknown,
      });
      expect(aheadLogs(server)).toEqual([]);
    }
  });

  it('stops gracefully, exit 0, on a signal while it waits for the host', async () => {
    const cacheDir = await recorded();
    const server = start(cacheDir);
    // The entry reads the record, holds the stop signals, then waits for the host's first line, which never comes:
    // the signal ends the wait. SIGHUP shows as caught in /proc once they are held (Node itself catches SIGINT and
    // SIGTERM from its start, to restore the terminal, and dies of them).
    await waitFor(() => caughtSignals(server.pid).includes('SIGHUP'), {
      describe: () => `signals caught: ${caughtSignals(server.pid).join(', ')}`,
    });
    server.child.kill('SIGTERM');
    expect(await server.exited()).toEqual({ code: 0, signal: null });
  });

  it('answers an initialize whose line stdin ended without a newline, once', async () => {
    const cacheDir = newCacheDir();
    const first = start(cacheDir);
    await session(first);
    await first.stop();

    const second = start(cacheDir);
    second.child.stdin?.end(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw-e2e', version: '1.0.0' } },
      }),
    );
    const exit = await second.exited();
    expect(exit.code).toBe(0);
    expect(second.responses(1)).toHaveLength(1);
    expect(aheadLogs(second)).toEqual([]);
  });
});
