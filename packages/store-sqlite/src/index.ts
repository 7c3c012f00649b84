export { sqliteStore } from './sqlite-store';
export type { SqliteStore } from './sqlite-store';
