/**
 * `@tollgate/limiter/store-kit`: the limiter's key layout, for whoever reads a LimiterStore
 * directly (a store's own tests, an operator's dashboard counting an account's requests in
 * flight). `createLimiter` builds these keys itself; applications never need them.
 *
 * @example
 * import { limiterKeys } from '@tollgate/limiter/store-kit';
 * const inFlight = await limiterStore.inFlight(limiterKeys.flight(accountId), Date.now());
 */
export { limiterKeys } from './limiter-keys';
