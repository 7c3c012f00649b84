/** One read of a {@link BodyReader}: a chunk, or the end (a web stream reader's result, spelled out so no DOM typings are needed). */
export type BodyReadResult = { done: false; value: Uint8Array } | { done: true; value?: Uint8Array | undefined };

/**
 * What a reader of a body's chunks offers: the two members of a web stream's default reader that
 * the providers use, so that a body can be read with or without a web stream in between.
 */
export interface BodyReader {
  /** The next chunk, or `done` at the end; rejects as the body's stream would error. One read at a time. */
  read(): Promise<BodyReadResult>;
  /** Lets the rest of the body go. */
  cancel(reason?: unknown): Promise<void>;
  /**
   * The next chunk or the end if the body has it now, else `null` (wait with `whenReadable`);
   * throws what `read` would reject with. A reader with no promise per chunk offers it (and
   * `whenReadable`) where it can: @tollgate/node's upstream replies.
   */
  readNow?(): BodyReadResult | null;
  /** Calls `wake` once, when `readNow` may have something new (a chunk, the end, a failure); one waiter at a time. */
  whenReadable?(wake: () => void): void;
}

/**
 * The key under which a `Response` may offer a {@link BodyReader} of its body that needs no web
 * stream: a method that returns one, and marks the body used, or `undefined` when the body can
 * only be read through its stream (already read, or handed out). @tollgate/node's upstream replies
 * have it (packages/node/src/upstream-response.ts); a registered symbol, so that every copy of this
 * package (a bundle, a second install) agrees on it.
 */
export const BODY_READER: unique symbol = Symbol.for('tollgate.body-reader');

type WithBodyReader = { [BODY_READER]?: () => BodyReader | undefined };

/**
 * A reader of `response`'s body: the runtime's own, where the response offers one under
 * {@link BODY_READER}, else its body stream's default reader; `null` for a response without a body.
 * Either way the body is used from then on.
 *
 * @example
 * const reader = bodyReader(response);
 * for (let read = await reader.read(); !read.done; read = await reader.read()) parser.push(read.value);
 */
export function bodyReader(response: Response): BodyReader | null {
  const own = (response as WithBodyReader)[BODY_READER]?.();
  if (own !== undefined) return own;
  return response.body?.getReader() ?? null;
}

/**
 * One promised read of a reader that answers what it has now: `readNow`, then `whenReadable` and
 * `readNow` again until it answers (a reader's `read` can be this).
 *
 * @example
 * read: () => readWhenReadable(reader),
 */
export function readWhenReadable(reader: Pick<Required<BodyReader>, 'readNow' | 'whenReadable'>): Promise<BodyReadResult> {
  return new Promise((resolve, reject) => {
    const step = () => {
      let read: BodyReadResult | null;
      try {
        read = reader.readNow();
      } catch (error) {
        return reject(error);
      }
      if (read === null) reader.whenReadable(step);
      else resolve(read);
    };
    step();
  });
}
