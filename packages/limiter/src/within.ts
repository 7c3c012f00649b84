/** Thrown by {@link within} when a store call outlives its deadline. */
export class StoreTimeoutError extends Error {
  override name = 'StoreTimeoutError';
}

/**
 * Settles like `promise`, or rejects with a {@link StoreTimeoutError} after `ms` (no deadline when
 * `ms` is undefined): a hung store must refuse requests quickly rather than hold them.
 */
export function within<T>(promise: Promise<T>, ms: number | undefined): Promise<T> {
  if (ms === undefined) return promise;
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new StoreTimeoutError(`limiter store gave no answer in ${ms} ms`)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
