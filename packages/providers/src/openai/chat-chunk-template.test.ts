import { describe, expect, it } from 'vitest';
import { matchChatChunk } from './chat-chunk-template';

/** A deterministic pseudo-random source, so a failure replays. */
function random(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state * 1_664_525 + 1_013_904_223) >>> 0;
    return state / 2 ** 32;
  };
}

const PIECES = ['a', ' quick', 'é', '日本', '😀', '"', '\\', '/', '\n', '\t', '\u0000', '\u001f', '\u2028', 'x"y', '\\n', '{"id":1}', '', ' '];

/** A content chunk as OpenAI streams it, with the optional members chosen by `next`. */
function contentChunk(next: () => number, content: string): Record<string, unknown> {
  const chunk: Record<string, unknown> = {
    id: `chatcmpl-${Math.floor(next() * 1e9)}`,
    object: 'chat.completion.chunk',
    created: Math.floor(next() * 2e9),
    model: next() < 0.5 ? 'gpt-4o-mini-2024-07-18' : 'm',
  };
  if (next() < 0.7) chunk.service_tier = 'default';
  const fingerprint = next();
  if (fingerprint < 0.5) chunk.system_fingerprint = 'fp_44709d6fcb';
  else if (fingerprint < 0.7) chunk.system_fingerprint = null;
  const delta: Record<string, unknown> = {};
  if (next() < 0.2) delta.role = 'assistant';
  delta.content = content;
  if (next() < 0.2) delta.refusal = null;
  chunk.choices = [{ index: 0, delta, logprobs: null, finish_reason: null }];
  if (next() < 0.7) chunk.usage = null;
  if (next() < 0.7) chunk.obfuscation = 'Ab3xY';
  return chunk;
}

describe('matchChatChunk', () => {
  it('reads every content chunk exactly as JSON.parse does, members in the same order', () => {
    const next = random(17);
    for (let round = 0; round < 3_000; round++) {
      let content = '';
      for (let count = Math.floor(next() * 4); count > 0; count--) content += PIECES[Math.floor(next() * PIECES.length)];
      const text = JSON.stringify(contentChunk(next, content));
      const chunk = matchChatChunk(text);
      expect(chunk, text).toStrictEqual(JSON.parse(text));
      expect(JSON.stringify(chunk)).toBe(text);
    }
  });

  it('leaves every other shape to JSON.parse', () => {
    const base = JSON.stringify(contentChunk(random(3), 'hi'));
    const others = [
      base.replace('"finish_reason":null', '"finish_reason":"stop"'),
      base.replace('"delta":{"content":"hi"}', '"delta":{}'),
      base.replace('"index":0', '"index":1'),
      base.replace('"content":"hi"', '"content":null'),
      base.replace('"content":"hi"', '"content":"hi","tool_calls":[]'),
      base.replace('"usage":null', '"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}'),
      base.replace('}]', '},{"index":1,"delta":{"content":"x"},"logprobs":null,"finish_reason":null}]'),
      base.replace('"created":', '"created":-'),
      base.replace(/"created":\d+/, '"created":1.5'),
      base.replace(/"created":\d+/, '"created":12345678901234567'),
      base.replace('"object":"chat.completion.chunk"', '"object":"chat.completion"'),
      base.replace('{"id"', '{ "id"'),
      base.replace(/"id":"[^"]*"/, '"id":"a\\"b"'),
      `${base}\n`,
      base.slice(0, -1),
      `${base.slice(0, -1)},"error":{"message":"x"}}`,
      base.replace('"content":"hi"', '"content":"a\\x"'),
      base.replace('"content":"hi"', '"content":"a\\u12"'),
      base.replace('"content":"hi"', '"content":"tab\there"'),
    ];
    for (const text of others) expect(matchChatChunk(text), text).toBeUndefined();
  });

  it('matches no text that JSON.parse refuses or reads otherwise (mutated chunks)', () => {
    const next = random(99);
    const alphabet = ['"', '\\', '{', '}', '[', ']', ',', ':', 'u', '0', 'a', ' ', '\n', 'null', '"x":1'];
    let matched = 0;
    for (let round = 0; round < 20_000; round++) {
      let text = JSON.stringify(contentChunk(next, PIECES[Math.floor(next() * PIECES.length)] as string));
      for (let edits = 1 + Math.floor(next() * 2); edits > 0; edits--) {
        const at = Math.floor(next() * text.length);
        const cut = Math.floor(next() * 3);
        text = text.slice(0, at) + (next() < 0.7 ? alphabet[Math.floor(next() * alphabet.length)] : '') + text.slice(at + cut);
      }
      const chunk = matchChatChunk(text);
      if (chunk === undefined) continue;
      matched++;
      expect(chunk, text).toStrictEqual(JSON.parse(text));
    }
    // The mutations that keep the shape (inside a string value) still match: the check above ran.
    expect(matched).toBeGreaterThan(1_000);
  });
});
