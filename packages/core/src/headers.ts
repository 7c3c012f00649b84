/** Header names of the spec, lower-cased as web `Headers` returns them. */
export const HEADER = {
  serviceVersion: 'x-service-version',
  funding: 'x-funding',
  requestId: 'x-request-id',
  outputLimited: 'x-output-limited',
  retryAfter: 'retry-after',
} as const;

/** How a request is paid: keys always pay `credits`; app principals may use the plan's `included` use. */
export type Funding = 'credits' | 'included';
