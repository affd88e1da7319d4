import type { Config } from 'jest';

// Tests live in one folder per tier under test/ (docs/testing.md, "Tiers"): `npm test` runs every
// tier, `npm run test:<tier>` one (`jest test/<tier>/`).
// Tests run on the TypeScript sources through ts-jest; worker-thread and child-process tests load
// the compiled dist/ (built by `pretest`), because workers cannot load .ts files themselves.
const config: Config = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    // Types are checked once by `tsc -p tsconfig.test.json` in `pretest`; here we only transpile
    // (ts-jest transpiles file by file when that tsconfig sets `isolatedModules`).
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.test.json' }],
  },
  testTimeout: 60_000,
};

export default config;
