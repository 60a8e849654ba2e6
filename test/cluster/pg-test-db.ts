// Moved to test/helpers/pg-test-db.ts (issue 27); kept for tests written before the move.
export * from '../helpers/pg-test-db.js';
