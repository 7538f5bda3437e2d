import { defineConfig } from 'vitest/config';

// The Docker image, built from the Dockerfile and run with podman: npm run test:container (builds it first).
export default defineConfig({
  test: {
    include: ['test/container/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
  },
});
