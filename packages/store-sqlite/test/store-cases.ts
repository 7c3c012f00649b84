/** Where the Store contract suite lives: the one import of it for the Bun and Deno runs. */
export { runStoreCases } from '@tollgate/testing/store-contract';
