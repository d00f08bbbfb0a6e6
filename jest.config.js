/**
 * ts-jest for our TypeScript. A few dependencies of Colyseus ship only ES modules, which Node
 * itself can require but Jest's module loader cannot: those are compiled to CommonJS too. So is
 * three (its CommonJS entry loads its ES modules), for the client's world in test/client.
 */
const ESM_ONLY_PACKAGES = ['rou3', 'hyparquet', 'hyparquet-writer', 'three'];

/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  // npm run test:scale runs these, with the servers they need.
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/scale/'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }],
    '^.+\\.m?js$': ['ts-jest', { tsconfig: { allowJs: true, module: 'commonjs', target: 'ES2022', isolatedModules: true } }],
  },
  transformIgnorePatterns: [`/node_modules/(?!(${ESM_ONLY_PACKAGES.join('|')})/)`],
  moduleFileExtensions: ['ts', 'js', 'mjs', 'json'],
};
