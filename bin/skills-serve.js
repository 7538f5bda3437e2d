#!/usr/bin/env node
// The command. A clone that was never built has no dist/: say so, instead of Node's module-not-found stack trace.
try {
  await import('../dist/cli.js');
} catch (error) {
  const missing = error?.code === 'ERR_MODULE_NOT_FOUND' && String(error.message).includes('/dist/cli.js');
  if (!missing) throw error;
  process.stderr.write(
    'skills-serve: dist/cli.js is missing: this clone is not built yet; run npm ci && npm run build in it\n',
  );
  process.exitCode = 1;
}
