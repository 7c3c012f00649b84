/**
 * `@tollgate/testing/store-contract`: the contract suites every store runs, for store authors.
 * They call vitest's `describe`/`it`/`expect`, so vitest is a peer dependency of this entry only.
 *
 * @example
 * import { runStoreCases } from '@tollgate/testing/store-contract';
 * runStoreCases('my store', async ({ now }) => ({ store: myStore({ now }) }));
 */
export { runLimiterStoreCases } from './store-contract/run-limiter-store-cases';
export type { MakeLimiterStore } from './store-contract/run-limiter-store-cases';
export { runStoreCases } from './store-contract/run-store-cases';
export type { StoreCaseSetup } from './store-contract/run-store-cases';
