import { encodeBase64 } from './encode-base64';
import { makePng } from './make-png';
import { invalidRequest, openaiErrorResponse } from './openai-error-response';
import { parseImagesRequest } from './parse-images-request';

/**
 * Faults the fake injects: OpenAI's own error answers, or a 200 that breaks the contract
 * (`fewer_images`: one image short of `n`; `not_an_image`: b64_json of non-image bytes;
 * `malformed`: a body cut short mid-JSON).
 */
export type FakeImagesFault = 'rate_limit' | 'server_error' | 'overloaded' | 'content_policy' | 'fewer_images' | 'not_an_image' | 'malformed';

/** Options of {@link fakeImagesHandler}. */
export interface FakeImagesOptions {
  /** Milliseconds to wait before answering; the request's signal aborts the wait. */
  delayMs?: number;
  /** A fault to answer with instead of images. */
  fail?: FakeImagesFault;
  /** When set, requests must carry `Authorization: Bearer <apiKey>` (401 otherwise). */
  apiKey?: string;
  /** The clock of `created`, in milliseconds (default `Date.now`). */
  now?: () => number;
  /** Sees each valid request body, so tests can assert what an adapter sent. */
  onRequest?: (body: Record<string, unknown>) => void;
}

/**
 * A fake of OpenAI's `POST /v1/images/generations`: validates the body as OpenAI does and answers
 * `{ created, data: [{ b64_json }], size, quality, output_format, background, usage }` with real
 * PNGs of the requested size, seeded by the prompt (and the image's index) so images differ.
 * @example
 * const provider = openaiCompatible({ baseURL: 'http://fake/v1', fetch: (input, init) => fakeImagesHandler(new Request(input, init)) });
 */
export async function fakeImagesHandler(request: Request, options: FakeImagesOptions = {}): Promise<Response> {
  const path = new URL(request.url).pathname;
  if (request.method !== 'POST' || !path.endsWith('/images/generations')) {
    return openaiErrorResponse(404, { message: `Invalid URL (${request.method} ${path})`, type: 'invalid_request_error', param: null, code: null });
  }
  if (options.apiKey !== undefined && request.headers.get('authorization') !== `Bearer ${options.apiKey}`) {
    const error = { message: 'Incorrect API key provided.', type: 'invalid_request_error', param: null, code: 'invalid_api_key' };
    return openaiErrorResponse(401, error);
  }
  let body: unknown;
  try {
    body = await request.json();
  } catch {
    return invalidRequest(null, "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly.)");
  }
  const parsed = parseImagesRequest(body);
  if (!parsed.ok) return parsed.response;
  options.onRequest?.(body as Record<string, unknown>);
  if (options.delayMs) await wait(options.delayMs, request.signal);
  const fault = faultResponse(options.fail);
  if (fault) return fault;
  const { prompt, n, width, height, size, quality } = parsed.request;
  const count = options.fail === 'fewer_images' ? n - 1 : n;
  const seed = hash(prompt);
  const images = await Promise.all(Array.from({ length: count }, (_, index) => makePng(width, height, { seed: (seed + index * 0x9e3779b9) >>> 0 })));
  const data = images.map((png) => ({
    b64_json: options.fail === 'not_an_image' ? encodeBase64(new TextEncoder().encode('<html>not an image</html>')) : encodeBase64(png),
  }));
  // Token usage in the shape of gpt-image-1: ~4 UTF-8 bytes a text token, one output token per 1,024 pixels.
  const inputTokens = Math.ceil(new TextEncoder().encode(prompt).length / 4);
  const outputTokens = count * Math.ceil((width * height) / 1024);
  const reply = {
    created: Math.floor((options.now ?? Date.now)() / 1000),
    background: 'opaque',
    data,
    output_format: 'png',
    quality: quality === 'auto' ? 'medium' : quality,
    size,
    usage: {
      input_tokens: inputTokens,
      input_tokens_details: { image_tokens: 0, text_tokens: inputTokens },
      output_tokens: outputTokens,
      total_tokens: inputTokens + outputTokens,
    },
  };
  return Response.json(reply, { headers: { 'x-request-id': `req_fake_${seed.toString(16)}` } });
}

function faultResponse(fault: FakeImagesFault | undefined): Response | undefined {
  switch (fault) {
    case 'rate_limit':
      return openaiErrorResponse(
        429,
        { message: 'Rate limit reached for images per minute. Please try again in 1s.', type: 'requests', param: null, code: 'rate_limit_exceeded' },
        { 'retry-after': '1' },
      );
    case 'server_error':
      return openaiErrorResponse(500, {
        message: 'The server had an error while processing your request. Sorry about that!',
        type: 'server_error',
        param: null,
        code: null,
      });
    case 'overloaded':
      return openaiErrorResponse(503, {
        message: 'The engine is currently overloaded, please try again later.',
        type: 'server_error',
        param: null,
        code: null,
      });
    case 'content_policy':
      return openaiErrorResponse(400, {
        message: 'Your request was rejected as a result of our safety system. Your request may contain content that is not allowed by our safety system.',
        type: 'image_generation_user_error',
        param: null,
        code: 'moderation_blocked',
      });
    case 'malformed':
      return new Response('{"created": 1700000000, "data": [{"b64_json": "iVBORw0KGgoAAAAN', { headers: { 'content-type': 'application/json' } });
    default:
      return undefined;
  }
}

/** FNV-1a over the prompt's UTF-16 units: a stable seed per prompt. */
function hash(text: string): number {
  let value = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) value = Math.imul(value ^ text.charCodeAt(index), 0x01000193);
  return value >>> 0;
}

function wait(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    // A fetch whose signal aborts rejects with the signal's reason: the fake does the same.
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
