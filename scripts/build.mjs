// Bundles src/cli.ts into one ESM file, dist/cli.js, so `npx skills-serve` starts without resolving a module graph.
// CommonJS dependencies (pino, commander) call require(): the banner gives the bundle a real one.
import { readFileSync } from 'node:fs';
import { build } from 'esbuild';

const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));

await build({
  entryPoints: ['src/cli.ts'],
  outfile: 'dist/cli.js',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20.19',
  sourcemap: true,
  legalComments: 'none',
  logLevel: 'warning',
  define: { SKILLS_SERVE_VERSION: JSON.stringify(version) },
  banner: {
    js: "import { createRequire as __skillsServeCreateRequire } from 'node:module'; const require = __skillsServeCreateRequire(import.meta.url);",
  },
});
