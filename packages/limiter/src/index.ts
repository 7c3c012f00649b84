export type { AcquireRefusal, AcquireResult, LimiterStore, RateLimit, RateRefusal, RateResult, Semaphore } from './store';
export { createLimiter } from './create-limiter';
export type { AcquireLeaseResult, AdmitResult, Lease, Limiter, LimiterAccount, LimiterOptions, LimiterRefusal } from './create-limiter';
export { endpointRateLimits } from './endpoint-rate-limits';
export type { Endpoint, EndpointRateLimits } from './endpoint-rate-limits';
export { memoryLimiter } from './memory-limiter';
export type { MemoryLimiterOptions } from './memory-limiter';
export { rateLimitFor } from './rate-limit-for';
