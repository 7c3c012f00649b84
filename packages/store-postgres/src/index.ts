export { postgresStore } from './postgres-store';
export type { PostgresStore, PostgresStoreOptions } from './postgres-store';
