/**
 * Heap settings for a long-running, per-session process whose memory every host session pays again
 * (docs/ARCHITECTURE.md, "Memory"). Imported first by `cli.ts`, before anything sizable is allocated.
 *
 * V8's young generation grows to 16 MiB semi-spaces (tens of MiB resident) under the index build's many short-lived
 * objects; keeping it at its initial size cut the peak resident set of a 10,000-skill build from 189 MB to 142 MB and
 * made the build no slower (`npm run bench`); `--optimize-for-size` keeps the old generation from growing far ahead
 * of what is live. A flag the user passes (`NODE_OPTIONS`) still wins: it is not overridden.
 */
import v8 from 'node:v8';

const given = `${process.env['NODE_OPTIONS'] ?? ''} ${process.execArgv.join(' ')}`;
if (!/--semi-space-growth-factor|--max-semi-space-size/u.test(given))
  v8.setFlagsFromString('--semi-space-growth-factor=1');
// The old generation grows less eagerly: at 10,000 skills the peak fell from 204 to 195 MB watching and from 162 to
// 150 MB with --no-watch; at 1,000 skills from 89 to 82 MB. The price, in A/B runs: startup unchanged at 1,000 skills,
// about 10% slower at 10,000 (more, smaller collections). Memory is what every host session pays, so it is taken.
if (!/--optimize-for-size|--no-optimize-for-size/u.test(given)) v8.setFlagsFromString('--optimize-for-size');
