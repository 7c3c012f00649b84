/**
 * Reading a gateway stream event by event in tests (not exported), as a client that reads only
 * what it needs and may leave mid-stream. Reading a whole body is `readEvents` in test-harness.ts.
 */

/** A body read on demand: `take(n)` reads until n more `data:` payloads arrived; other events go to `comments`. */
export interface StepReader {
  /** The comment events (keepalives) read so far, in order. */
  comments: string[];
  take(n: number): Promise<string[]>;
  cancel(): Promise<void>;
}

/** Reads a body on demand: `take(n)` reads until n more `data:` events arrived. */
export function stepReader(response: Response): StepReader {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const comments: string[] = [];
  return {
    comments,
    async take(n: number): Promise<string[]> {
      const out: string[] = [];
      while (out.length < n) {
        const at = buffer.indexOf('\n\n');
        if (at >= 0) {
          const event = buffer.slice(0, at);
          buffer = buffer.slice(at + 2);
          if (event.startsWith('data: ')) out.push(event.slice(6));
          else comments.push(event);
          continue;
        }
        const { value, done } = await reader.read();
        if (done) throw new Error(`the stream ended after ${out.length} of ${n} events`);
        buffer += decoder.decode(value, { stream: true });
      }
      return out;
    },
    cancel: () => reader.cancel(),
  };
}
