/**
 * Options of an earlier release are never removed in one step (CONTRIBUTING.md, "Compatibility"): the removed
 * `--instructions-max` and `--instructions-wait`, and their environment twins, are accepted again over the real CLI.
 * The server serves and exits 0, writes exactly one warning line naming what replaced the option, and
 * `--instructions-max` sets `--catalog-max` unless that is given; neither shows in `--help`.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { cli } from '../helpers/cli.js';
import { SAMPLE_SKILLS } from '../helpers/server.js';
import { skillMd, tempTrees } from '../helpers/tree.js';
import { SERVER_DEFAULT_LOG_LEVEL, spawnWire, stopAll } from '../helpers/wire.js';

const temps = tempTrees();
/** 120 skills: a catalog far longer than 4,096 characters, so each bound cuts it somewhere else. */
let root: string;
beforeAll(async () => {
  const spec: Record<string, string> = {};
  for (let index = 0; index < 120; index++) {
    const name = `skill-${String(index).padStart(3, '0')}`;
    spec[`${name}/SKILL.md`] = skillMd(name, `Handles the ${index}th kind of task, described at some length here.`);
  }
  root = await temps.tree(spec);
});
afterEach(stopAll);
afterAll(() => temps.removeAll());

/**
 * Serves `root` with `args` and `env` at the server's own default log level (`warn` over stdio to a host), asks for
 * its tools and a `skills/list` page, ends stdin and waits for the exit.
 *
 * @returns `read_skill`'s description, how many skills were listed, the exit code and the stderr lines.
 */
async function serve(
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<{ readSkill: string | undefined; listed: number; code: number | null; stderr: string[] }> {
  const wire = spawnWire({ args: [root, ...args], env: { ...SERVER_DEFAULT_LOG_LEVEL, ...env } });
  await wire.handshake();
  const tools = (await wire.request('tools/list', {}))['result'] as { tools: { name: string; description: string }[] };
  const list = (await wire.request('skills/list', {}))['result'] as { skills: unknown[] };
  wire.child.stdin?.end();
  const { code } = await wire.exited();
  return {
    readSkill: tools.tools.find((tool) => tool.name === 'read_skill')?.description,
    listed: list.skills.length,
    code,
    stderr: wire
      .stderr()
      .split('\n')
      .filter((line) => line !== ''),
  };
}

/** The one stderr line, parsed (a pino JSON line). */
function onlyLine(stderr: readonly string[]): Record<string, unknown> {
  expect(stderr).toHaveLength(1);
  return JSON.parse(stderr[0] as string) as Record<string, unknown>;
}

describe('--instructions-max and --instructions-wait (removed in an earlier release)', () => {
  let plain: Awaited<ReturnType<typeof serve>>;
  let catalog2000: string | undefined;
  beforeAll(async () => {
    plain = await serve([]);
    catalog2000 = (await serve(['--catalog-max', '2000'])).readSkill;
  });

  it('without them, a clean start writes nothing to stderr (so the warning below is the only line)', () => {
    expect(plain).toMatchObject({ listed: 100, code: 0, stderr: [] });
    expect(catalog2000).not.toBe(plain.readSkill);
    expect(catalog2000?.length).toBeLessThanOrEqual(2000);
  });

  it('--instructions-max serves, sets --catalog-max, and warns once naming --catalog-max', async () => {
    const run = await serve(['--instructions-max', '2000']);
    expect(run).toMatchObject({ listed: 100, code: 0 });
    expect(run.readSkill).toBe(catalog2000);
    expect(onlyLine(run.stderr)).toMatchObject({
      level: 40,
      event: 'option-deprecated',
      option: '--instructions-max',
      replacement: '--catalog-max',
    });
    expect(String(onlyLine(run.stderr)['msg'])).toContain('use --catalog-max');
  });

  it('--catalog-max wins over --instructions-max; the warning still comes, once', async () => {
    const run = await serve(['--instructions-max', '2000', '--catalog-max', '3000']);
    expect(run.code).toBe(0);
    expect(run.readSkill).not.toBe(catalog2000);
    expect(run.readSkill?.length).toBeGreaterThan(2000);
    expect(run.readSkill?.length).toBeLessThanOrEqual(3000);
    expect(onlyLine(run.stderr)).toMatchObject({ event: 'option-deprecated', option: '--instructions-max' });
  });

  it('--instructions-wait serves as before and warns once that it does nothing', async () => {
    const run = await serve(['--instructions-wait', '500']);
    expect(run).toMatchObject({ listed: 100, code: 0, readSkill: plain.readSkill });
    const line = onlyLine(run.stderr);
    expect(line).toMatchObject({ level: 40, event: 'option-deprecated', option: '--instructions-wait' });
    expect(line['replacement']).toBeUndefined();
  });

  it('their environment twins are accepted too, and the warning names the variables', async () => {
    const max = await serve([], { SKILLS_SERVE_INSTRUCTIONS_MAX: '2000' });
    expect(max).toMatchObject({ code: 0, readSkill: catalog2000 });
    expect(onlyLine(max.stderr)).toMatchObject({
      event: 'option-deprecated',
      option: 'SKILLS_SERVE_INSTRUCTIONS_MAX',
      replacement: 'SKILLS_SERVE_CATALOG_MAX',
    });
    const wait = await serve([], { SKILLS_SERVE_INSTRUCTIONS_WAIT: '2000' });
    expect(wait).toMatchObject({ code: 0, readSkill: plain.readSkill });
    expect(onlyLine(wait.stderr)).toMatchObject({
      event: 'option-deprecated',
      option: 'SKILLS_SERVE_INSTRUCTIONS_WAIT',
    });
  });

  it('keeps the values they accepted: out of range is still a usage error (exit 2)', () => {
    for (const args of [
      ['--instructions-max', '10'],
      ['--instructions-wait', '30001'],
    ]) {
      const run = cli([...args, SAMPLE_SKILLS]);
      expect(run.status).toBe(2);
      expect(run.stderr).toContain(`${args[0]} must be an integer from`);
    }
  });

  it('are hidden from --help', () => {
    const help = cli(['serve', '--help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('--catalog-max');
    expect(help.stdout).not.toContain('--instructions-');
  });
});
