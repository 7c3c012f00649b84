import { invalidRequest } from './openai-error-response';

/** A validated images request of the OpenAI wire format, with the size resolved to the pixels drawn. */
export interface ImagesRequest {
  model: string;
  prompt: string;
  n: number;
  width: number;
  height: number;
  size: string;
  quality: string;
}

/** The largest side the fake accepts: OpenAI-compatible servers take up to 4K; larger is refused. */
export const MAX_SIDE = 4096;

/** The largest side the fake draws: bigger requests are drawn scaled down, ratio kept, for speed. */
export const MAX_DRAWN_SIDE = 2048;

// Every parameter of POST /v1/images/generations (openai SDK ImageGenerateParams); others are unknown.
const KNOWN = new Set([
  'model',
  'prompt',
  'n',
  'size',
  'quality',
  'response_format',
  'background',
  'moderation',
  'output_compression',
  'output_format',
  'partial_images',
  'stream',
  'style',
  'user',
]);
const QUALITIES = new Set(['auto', 'low', 'medium', 'high', 'standard', 'hd']);

/**
 * Validates a body as api.openai.com does for the fields the fake acts on, answering refusals with
 * OpenAI's 400 bodies. Fields the fake cannot honour (url replies, non-PNG formats, streaming) are
 * refused with a message saying so, rather than ignored.
 */
export function parseImagesRequest(body: unknown): { ok: true; request: ImagesRequest } | { ok: false; response: Response } {
  const refuse = (param: string | null, message: string, code: string | null = null) => ({
    ok: false as const,
    response: invalidRequest(param, message, code),
  });
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return refuse(null, "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly.)");
  }
  const fields = body as Record<string, unknown>;
  for (const name of Object.keys(fields)) {
    if (!KNOWN.has(name)) return refuse(name, `Unknown parameter: '${name}'.`, 'unknown_parameter');
  }
  const { model = 'dall-e-2', prompt, n = 1, size = 'auto', quality = 'auto', response_format, output_format, stream } = fields;
  if (prompt === undefined) return refuse('prompt', "Missing required parameter: 'prompt'.", 'missing_required_parameter');
  if (typeof prompt !== 'string') return refuse('prompt', "Invalid type for 'prompt': expected a string.", 'invalid_type');
  if (prompt.length === 0) return refuse('prompt', "Invalid 'prompt': empty string.", 'empty_string');
  if (typeof model !== 'string') return refuse('model', "Invalid type for 'model': expected a string.", 'invalid_type');
  if (typeof n !== 'number' || !Number.isInteger(n)) return refuse('n', "Invalid type for 'n': expected an integer.", 'invalid_type');
  if (n < 1) return refuse('n', `Invalid 'n': integer below minimum value. Expected a value >= 1, but got ${n} instead.`, 'integer_below_min_value');
  if (n > 10) return refuse('n', `Invalid 'n': integer above maximum value. Expected a value <= 10, but got ${n} instead.`, 'integer_above_max_value');
  if (typeof quality !== 'string' || !QUALITIES.has(quality)) {
    return refuse(
      'quality',
      `Invalid value: '${String(quality)}'. Supported values are: 'auto', 'low', 'medium', 'high', 'standard' and 'hd'.`,
      'invalid_value',
    );
  }
  // gpt-image-* always answer base64 and refuse the field, as OpenAI does.
  if (response_format !== undefined && model.startsWith('gpt-image-'))
    return refuse('response_format', "Unknown parameter: 'response_format'.", 'unknown_parameter');
  if (response_format !== undefined && response_format !== 'b64_json') {
    return refuse('response_format', `Invalid value: '${String(response_format)}'. This fake returns images inline only: 'b64_json'.`, 'invalid_value');
  }
  if (output_format !== undefined && output_format !== 'png') {
    return refuse('output_format', `Invalid value: '${String(output_format)}'. This fake draws PNG only: 'png'.`, 'invalid_value');
  }
  if (stream !== undefined && stream !== false) return refuse('stream', 'This fake does not stream images.', 'invalid_value');
  const pixels = typeof size === 'string' ? parseSize(size) : undefined;
  if (pixels === undefined) {
    // As the brief of the fake asks: code null on a bad size, like dall-e's answers.
    return refuse('size', `Invalid value: '${String(size)}'. Supported values are: 'auto' and 'WIDTHxHEIGHT' with sides from 1 to ${MAX_SIDE}.`);
  }
  const drawn = capped(pixels.width, pixels.height);
  const request = { model, prompt, n, ...drawn, size: `${drawn.width}x${drawn.height}`, quality };
  return { ok: true, request };
}

function capped(width: number, height: number): { width: number; height: number } {
  const scale = Math.min(1, MAX_DRAWN_SIDE / Math.max(width, height));
  return { width: Math.max(1, Math.round(width * scale)), height: Math.max(1, Math.round(height * scale)) };
}

function parseSize(size: string): { width: number; height: number } | undefined {
  if (size === 'auto') return { width: 1024, height: 1024 };
  const match = /^([1-9]\d{0,4})x([1-9]\d{0,4})$/.exec(size);
  if (match === null) return undefined;
  const width = Number(match[1]);
  const height = Number(match[2]);
  return width <= MAX_SIDE && height <= MAX_SIDE ? { width, height } : undefined;
}
