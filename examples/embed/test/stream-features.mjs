// Checks, on the runtime that runs this file (node, bun or deno), each web API the Tollgate
// packages rely on, by using it the way they do, and prints one JSON object: feature -> true | error text.
// Plain JavaScript so every runtime runs it as it is; examples/embed/stream-features.test.ts reads the output.

const encoder = new TextEncoder();

/** A pull stream of `chunks` that counts pulls: the packages' streams are pull-based, highWaterMark 0. */
function pulled(chunks) {
  let at = 0;
  const stream = new ReadableStream(
    {
      pull(controller) {
        if (at < chunks.length) controller.enqueue(chunks[at++]);
        else controller.close();
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, pulls: () => at };
}

async function readAll(stream) {
  const reader = stream.getReader();
  const out = [];
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return out;
    out.push(value);
  }
}

function check(condition, what) {
  if (!condition) throw new Error(what);
}

const features = {
  // Used by the packages (link-abort, the gateway's SSE bodies, read-body, read-error-body).
  'ReadableStream pull, highWaterMark 0': async () => {
    const { stream, pulls } = pulled(['a', 'b']);
    await new Promise((resolve) => setTimeout(resolve, 5));
    check(pulls() === 0, 'pulled before any read');
    check((await readAll(stream)).join('') === 'ab', 'wrong chunks');
  },
  'ReadableStream cancel(reason) reaches the source': async () => {
    let reason;
    const stream = new ReadableStream({
      cancel(why) {
        reason = why;
      },
    });
    await stream.getReader().cancel('gone');
    check(reason === 'gone', 'cancel reason lost');
  },
  'TransformStream start/transform/flush + pipeThrough': async () => {
    const upper = new TransformStream({
      start() {},
      transform: (chunk, controller) => controller.enqueue(chunk.toUpperCase()),
      flush: (controller) => controller.enqueue('!'),
    });
    check((await readAll(pulled(['a', 'b']).stream.pipeThrough(upper))).join('') === 'AB!', 'wrong output');
  },
  'Response body from a ReadableStream': async () => {
    const response = new Response(pulled([encoder.encode('data: 1\n\n')]).stream, { headers: new Headers({ 'content-type': 'text/event-stream' }) });
    check((await response.text()) === 'data: 1\n\n', 'wrong body');
  },
  'TextDecoder fatal + stream': async () => {
    const decoder = new TextDecoder('utf-8', { fatal: true });
    const euro = encoder.encode('€');
    check(decoder.decode(euro.subarray(0, 1), { stream: true }) + decoder.decode(euro.subarray(1)) === '€', 'split character lost');
    let threw = false;
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(new Uint8Array([0xff]));
    } catch {
      threw = true;
    }
    check(threw, 'fatal decoder accepted invalid UTF-8');
  },
  'crypto.getRandomValues + crypto.subtle.digest SHA-256': async () => {
    check(crypto.getRandomValues(new Uint8Array(4096)).length === 4096, 'getRandomValues');
    const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', encoder.encode('abc')));
    check(digest[0] === 0xba && digest[31] === 0xad, 'wrong SHA-256');
  },
  'AbortController reason + AbortSignal.timeout + DOMException': async () => {
    const controller = new AbortController();
    controller.abort(new DOMException('The client disconnected.', 'AbortError'));
    check(controller.signal.reason.name === 'AbortError', 'reason lost');
    const timeout = AbortSignal.timeout(1);
    // Node's timeout timer is unref'd: without a timer of our own the process may exit first (code 13).
    const alive = setTimeout(() => {}, 5_000);
    await new Promise((resolve) => timeout.addEventListener('abort', resolve, { once: true }));
    clearTimeout(alive);
    check(timeout.reason.name === 'TimeoutError', 'timeout reason');
  },
  'atob/btoa': async () => {
    check(atob(btoa('tollgate')) === 'tollgate', 'round trip');
  },
  // Not used by the packages; listed because embedding apps and client code reach for them.
  'async iteration of ReadableStream': async () => {
    const out = [];
    for await (const chunk of pulled(['a', 'b']).stream) out.push(chunk);
    check(out.join('') === 'ab', 'wrong chunks');
  },
  'ReadableStream.from': async () => {
    check(typeof ReadableStream.from === 'function', 'missing');
    check((await readAll(ReadableStream.from(['a', 'b']))).join('') === 'ab', 'wrong chunks');
  },
  TextDecoderStream: async () => {
    const euro = encoder.encode('€');
    const text = await readAll(pulled([euro.subarray(0, 1), euro.subarray(1)]).stream.pipeThrough(new TextDecoderStream()));
    check(text.join('') === '€', 'split character lost');
  },
};

const results = {};
for (const [name, run] of Object.entries(features)) {
  try {
    await run();
    results[name] = true;
  } catch (error) {
    results[name] = String(error instanceof Error ? error.message : error);
  }
}
console.log(JSON.stringify(results));
