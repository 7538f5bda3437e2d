/**
 * A host that reads the server's stdout slowly (opencode's TUI sends a `prompts/get` for every prompt at start): the
 * server waits for stdout to drain as often as the host falls behind, and each wait leaves nothing behind. Twelve
 * times over, the test stops reading, sends a batch of requests whose answers are more than the pipe and the reading
 * stream can hold (so the server certainly ends up waiting for 'drain'), waits until the stream is full, then reads
 * the whole batch; a listener left by each wait would pass Node's limit of ten and print
 * `MaxListenersExceededWarning` on stderr. Each stall is made by the batch's size, not by when the test happens to
 * pause: a pause with only a few answers left to come would never fill the stream.
 */
import { afterEach, describe, expect, it } from 'vitest';

import { SAMPLE_SKILLS } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';
import { spawnWire, stopAll } from '../helpers/wire.js';

afterEach(stopAll);

describe('stdout backpressure', () => {
  it('answers 12 batches of 400 prompts/get, each through a stall, and prints no listener warning', async () => {
    const wire = spawnWire({ args: [SAMPLE_SKILLS], env: { SKILLS_SERVE_LOG_LEVEL: 'warn' } });
    await wire.handshake();
    const stdout = wire.child.stdout;
    if (stdout === null) throw new Error('no stdout');
    // 400 answers of about 2.5 KB: about 1 MB, more than the socket pair's buffers (2 × net.core.wmem_default, about
    // 416 KiB here) and the stream's high-water mark together.
    const batch = 400;
    for (let stall = 0; stall < 12; stall++) {
      const ids = Array.from({ length: batch }, (_, index) => `get-${stall}-${index}`);
      stdout.pause();
      await wire.write(
        ids
          .map(
            (id) =>
              `${JSON.stringify({ jsonrpc: '2.0', id, method: 'prompts/get', params: { name: 'report-writer' } })}\n`,
          )
          .join(''),
      );
      // Full: the stream stopped reading at its high-water mark, and the kernel's buffers behind it are full too.
      await waitFor(() => stdout.readableLength >= stdout.readableHighWaterMark);
      expect(ids.filter((id) => wire.responses(id).length > 0)).toEqual([]);
      stdout.resume();
      await waitFor(() => ids.every((id) => wire.responses(id).length > 0));
    }
    expect(wire.badLines).toEqual([]);
    expect(wire.stderr()).not.toContain('MaxListenersExceededWarning');
    expect(wire.stderr()).toBe('');
  });
});
