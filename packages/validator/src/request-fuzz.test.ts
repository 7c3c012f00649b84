import { isErrorCode, type ModelConfig } from '@tollgate/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseChatRequest } from './parse-chat-request';
import { parseFetchRequest } from './parse-fetch-request';
import { parseImageRequest } from './parse-image-request';
import { parseJsonStrict } from './parse-json-strict';
import { parseSearchRequest } from './parse-search-request';
import { resolveChatRequest } from './resolve-chat-request';
import { resolveImageRequest } from './resolve-image-request';

const chatBody = {
  model: 'fast',
  messages: [
    { role: 'system', content: 'Be brief.' },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'What is this?' },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA', detail: 'low' } },
      ],
    },
    { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'look', arguments: '{}' } }] },
    { role: 'tool', content: 'a cat', tool_call_id: 'c1' },
  ],
  stream: true,
  stream_options: { include_usage: true },
  max_tokens: 100,
  reasoning_effort: 'low',
  tools: [{ type: 'function', function: { name: 'look', description: 'Looks', parameters: { type: 'object', properties: {} } } }],
  tool_choice: 'auto',
  parallel_tool_calls: true,
};
const imageBody = {
  model: 'pix',
  prompt: 'a cat',
  n: 2,
  aspect_ratio: '1:1',
  resolution: '1k',
  quality: 'low',
  reference_images: ['data:image/png;base64,AAAA'],
  response_format: 'b64_json',
};
const chatModel: ModelConfig = { id: 'fast', type: 'chat', max_output_tokens: 500, input_modalities: ['text', 'image'] };
const imageModel: ModelConfig = { id: 'pix', type: 'image', max_reference_images: 1, qualities: ['low'] };

type Json = unknown;
/** Every (container, key) slot of a JSON tree. */
function slots(value: Json, out: [Record<string, Json> | Json[], string | number][] = []) {
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      out.push([value, index]);
      slots(item, out);
    }
  } else if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      out.push([value as Record<string, Json>, key]);
      slots(item, out);
    }
  }
  return out;
}

const mutation = fc.array(
  fc.record({
    at: fc.nat(),
    kind: fc.constantFrom('replace', 'delete', 'add'),
    value: fc.jsonValue({ maxDepth: 2 }),
    key: fc.constantFrom('type', 'role', 'url', 'content', 'x', 'name', 'size'),
  }),
  { minLength: 1, maxLength: 4 },
);

function mutate(base: Json, steps: { at: number; kind: string; value: Json; key: string }[]): Record<string, unknown> {
  const copy = structuredClone(base) as Record<string, unknown>;
  for (const original of steps) {
    // fast-check shares generated values between steps: insert copies so no tree becomes cyclic.
    const step = { ...original, value: structuredClone(original.value) };
    const all = slots(copy);
    if (all.length === 0) break;
    const [container, key] = all[step.at % all.length] as [Record<string, Json> | Json[], string | number];
    if (step.kind === 'replace') (container as Record<string, Json>)[key] = step.value;
    else if (step.kind === 'delete') Array.isArray(container) ? container.splice(key as number, 1) : delete container[key as string];
    else {
      const target = (container as Record<string, Json>)[key];
      if (typeof target === 'object' && target !== null && !Array.isArray(target)) (target as Record<string, Json>)[step.key] = step.value;
      else copy[step.key] = step.value;
    }
  }
  return copy;
}

function expectCatalogueCode(result: { ok: true } | { ok: false; error: { code: string; message?: string } }) {
  if (!result.ok) {
    expect(isErrorCode(result.error.code)).toBe(true);
    expect(typeof result.error.message).toBe('string');
  }
}

describe('fuzzing the request validators', () => {
  it('chat: mutated bodies only ever give catalogue codes, through both phases and JSON', () => {
    fc.assert(
      fc.property(mutation, (steps) => {
        const body = mutate(chatBody, steps);
        const text = JSON.stringify(body);
        expect(parseJsonStrict(text)).toStrictEqual({ ok: true, value: JSON.parse(text) });
        const parsed = parseChatRequest(body);
        expectCatalogueCode(parsed);
        if (parsed.ok) expectCatalogueCode(resolveChatRequest(parsed.value, chatModel));
      }),
      { numRuns: 600 },
    );
  });

  it('image, search and fetch: mutated bodies only ever give catalogue codes', () => {
    fc.assert(
      fc.property(mutation, (steps) => {
        const body = mutate(imageBody, steps);
        const parsed = parseImageRequest(body);
        expectCatalogueCode(parsed);
        if (parsed.ok) expectCatalogueCode(resolveImageRequest(parsed.value, imageModel));
        expectCatalogueCode(parseSearchRequest(mutate({ query: 'q', max_results: 3, model: 'web' }, steps)));
        expectCatalogueCode(parseFetchRequest(mutate({ url: 'https://example.com/', format: 'text' }, steps)));
      }),
      { numRuns: 600 },
    );
  });

  it('arbitrary JSON objects never throw', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom('model', 'messages', 'prompt', 'n', 'tools', 'x'), fc.jsonValue({ maxDepth: 3 })), (body) => {
        expectCatalogueCode(parseChatRequest(body));
        expectCatalogueCode(parseImageRequest(body));
      }),
      { numRuns: 500 },
    );
  });
});
