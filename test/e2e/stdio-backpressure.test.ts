/**
 * A host that reads the server's stdout slowly (opencode's TUI sends a `prompts/get` for every prompt at start): the
 * server waits for stdout to drain as often as the host falls behind, and each wait leaves nothing behind. Twelve
 * times over, the test stops reading until the pipes are full (so the server is waiting for 'drain'), then reads on;
 * a listener left by each wait would pass Node's limit of ten and print `MaxListenersExceededWarning` on stderr.
 */
import { afterEach, describe, expect, it } from 'vitest';

import { SAMPLE_SKILLS } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';
import { spawnWire, stopAll } from '../helpers/wire.js';

afterEach(stopAll);

describe('stdout backpressure', () => {
  it('answers 1,000 prompts/get through twelve stalls, and prints no listener warning', async () => {
    const wire = spawnWire({ args: [SAMPLE_SKILLS], env: { SKILLS_SERVE_LOG_LEVEL: 'warn' } });
    await wire.handshake();
    const stdout = wire.child.stdout;
    if (stdout === null) throw new Error('no stdout');
    const count = 1000;
    const ids = Array.from({ length: count }, (_, index) => `get-${index}`);
    await wire.write(
      ids
        .map(
          (id) =>
            `${JSON.stringify({ jsonrpc: '2.0', id, method: 'prompts/get', params: { name: 'report-writer' } })}\n`,
        )
        .join(''),
    );
    const answered = (): number => ids.filter((id) => wire.responses(id).length > 0).length;
    for (let stall = 0; stall < 12; stall++) {
      const before = answered();
      stdout.pause();
      // Full: the stream stopped reading at its high-water mark, and the kernel pipe behind it fills next.
      await waitFor(() => stdout.readableLength >= stdout.readableHighWaterMark || answered() === count);
      stdout.resume();
      await waitFor(() => answered() > before || answered() === count);
    }
    await waitFor(() => answered() === count);
    expect(wire.badLines).toEqual([]);
    expect(wire.stderr()).not.toContain('MaxListenersExceededWarning');
    expect(wire.stderr()).toBe('');
  });
});
