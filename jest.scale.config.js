/** The scale-out tests (`npm run test:scale`): they start Redis and PostgreSQL from Debian's packages. */
const base = require('./jest.config');

/** @type {import('jest').Config} */
module.exports = { ...base, roots: ['<rootDir>/test/scale'], testPathIgnorePatterns: ['/node_modules/'], maxWorkers: 1 };
