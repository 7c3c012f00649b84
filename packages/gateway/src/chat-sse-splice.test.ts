import type { ChatCompletionChunk } from '@tollgate/core';
import type { ChunkBatch } from '@tollgate/providers';
import { describe, expect, it } from 'vitest';
import { ChunkPrefix, chatSseFormat, upstreamFields } from './chat-sse-format';

/** A batch of one chunk as the OpenAI adapter hands it on: parsed from `text`, with the text beside it. */
const parsed = (text: string): ChunkBatch<ChatCompletionChunk> => Object.assign([JSON.parse(text) as ChatCompletionChunk], { texts: [text] });

let counter = 0;
const format = () => chatSseFormat({ id: 'chatcmpl-ours', model: 'fast "one"', includeUsage: false, obfuscate: () => `pad${++counter}`, now: () => 0 });
const decoder = new TextDecoder();
/** The JSON of the one event in `bytes`. */
const eventOf = (bytes: Uint8Array | undefined): unknown => {
  const text = decoder.decode(bytes);
  expect(text.startsWith('data: ') && text.endsWith('\n\n')).toBe(true);
  return JSON.parse(text.slice(6, -2));
};

/** What the client gets for `text`, spliced (the adapter kept the text) and serialised (it did not), with the same obfuscation. */
const both = (text: string) => {
  counter = 0;
  const spliced = eventOf(format().items!(parsed(text)));
  counter = 0;
  const serialised = eventOf(format().item(JSON.parse(text) as ChatCompletionChunk));
  return { spliced, serialised };
};

const openai = (middle: string, tail = '') =>
  `{"id":"chatcmpl-up","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o-mini",${middle}${tail}}`;
const CHOICE = '"system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"content":"Hi \\"there\\" \\u00e9"},"logprobs":null,"finish_reason":null}]';

describe('chatSseFormat splices the upstream text', () => {
  it.each([
    ['no usage, no obfuscation', openai(CHOICE)],
    ['usage null', openai(CHOICE, ',"usage":null')],
    ['the upstream’s obfuscation', openai(CHOICE, ',"obfuscation":"abc"')],
    ['usage null and obfuscation', openai(CHOICE, ',"usage":null,"obfuscation":"abc"')],
    ['tool-call arguments', openai('"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\\"a\\":1}"}}]},"finish_reason":null}]')],
    ['content that quotes a member name', openai('"choices":[{"index":0,"delta":{"content":"{\\"id\\":1,\\"model\\":2}"},"finish_reason":null}]')],
  ])('%s: the same event as serialising the chunk', (_name, text) => {
    const { spliced, serialised } = both(text);
    expect(spliced).toEqual(serialised);
    expect(spliced).toMatchObject({ id: 'chatcmpl-ours', model: 'fast "one"', obfuscation: 'pad1' });
    expect(upstreamFields(text, JSON.parse(text) as ChatCompletionChunk)).toBeDefined();
  });

  it.each([
    ['whitespace', openai(CHOICE).replace('"created":', '"created": ')],
    ['another member order', `{"object":"chat.completion.chunk","id":"chatcmpl-up","created":1,"model":"m",${CHOICE}}`],
    ['an id JSON escapes', openai(CHOICE).replace('chatcmpl-up', 'chatcmpl-\\u0041')],
    ['a model JSON escapes', openai(CHOICE).replace('gpt-4o-mini', 'gpt\\"4')],
    ['a created that is no plain integer', openai(CHOICE).replace('1700000000', '1.7e9')],
    ['usage with counts', openai(CHOICE, ',"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}')],
    ['usage null written elsewhere', openai(`"usage":null,${CHOICE}`)],
    ['an obfuscation that JSON escapes', openai(CHOICE, ',"obfuscation":"a\\"b"')],
    // An event of two data lines: the parser joins them with a line break, JSON whitespace.
    ['a line break between members', openai(`\n${CHOICE}`)],
    // A line break two characters past an `s` (as in `"choices":`), the choices member's name escaped.
    ['a line break after a value "s"', openai(`"k":"s"\n,${CHOICE.replace('"choices":', '"choice\\u0073":')}`)],
    // JSON.parse keeps the last of duplicate members: spliced, the client would read the first.
    ['a second id and model', openai(`${CHOICE},"id":"chatcmpl-up","model":"gpt-4o-mini"`)],
    // The same, the choices member's name escaped: the second id is the one reserved name in the text.
    ['a second id, the choices name escaped', openai(`${CHOICE.replace('"choices":', '"choice\\u0073":')},"id":"chatcmpl-up"`)],
    ['a second usage', openai(`${CHOICE},"usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}`, ',"usage":null')],
    ['two choices lists', openai(`"choices":[{"index":0,"delta":{"content":"first"},"finish_reason":null}],${CHOICE}`)],
    ['a choices list inside a choice', openai('"choices":[{"index":0,"delta":{"content":"x","choices":[]},"finish_reason":null}]')],
    ['an obfuscation member inside a choice', openai('"choices":[{"index":0,"delta":{"content":"x","obfuscation":"inner"},"finish_reason":null}]')],
    [
      'a nested member named id (a tool call)',
      openai('"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","function":{"arguments":"{}"}}]},"finish_reason":null}]'),
    ],
  ])('%s: not spliced, serialised as before', (_name, text) => {
    expect(upstreamFields(text, JSON.parse(text) as ChatCompletionChunk)).toBeUndefined();
    const { spliced, serialised } = both(text);
    expect(spliced).toEqual(serialised);
    expect(spliced).not.toHaveProperty('usage');
  });

  it.each([
    ['finish_reason "" and no delta', '"choices":[{"index":0,"finish_reason":""}]'],
    ['no delta alone', '"choices":[{"index":0,"finish_reason":null}]'],
  ])('a choice the format changes (%s) is serialised with the change', (_name, choices) => {
    counter = 0;
    expect(eventOf(format().items!(parsed(openai(choices))))).toEqual({
      id: 'chatcmpl-ours',
      object: 'chat.completion.chunk',
      created: 1700000000,
      model: 'fast "one"',
      choices: [{ index: 0, delta: {}, finish_reason: null }],
      obfuscation: 'pad1',
    });
  });

  it('one prefix serves a stream whose id, created or model changes: each chunk is still spliced', () => {
    const prefix = new ChunkPrefix();
    const texts = [
      openai(CHOICE),
      openai(CHOICE).replace('chatcmpl-up', 'chatcmpl-two'),
      openai(CHOICE).replace('chatcmpl-up', 'chatcmpl-two').replace('1700000000', '1700000001'),
      openai(CHOICE).replace('chatcmpl-up', 'chatcmpl-two').replace('1700000000', '1700000001').replace('gpt-4o-mini', 'gpt-4o'),
    ];
    for (const text of texts) expect(upstreamFields(text, JSON.parse(text) as ChatCompletionChunk, prefix), text).toBe(CHOICE);
  });

  it('a chunk with nothing between its model and its usage has no members to splice', () => {
    const text = '{"id":"chatcmpl-up","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o-mini","usage":null}';
    expect(upstreamFields(text, JSON.parse(text) as ChatCompletionChunk)).toBeUndefined();
  });

  it('counts what it delivers either way, and drops the upstream’s usage null', () => {
    const spliced = format();
    spliced.items!(parsed(openai(CHOICE, ',"usage":null')));
    expect(spliced.delivered).toBe('Hi "there" é');
    counter = 0;
    const text = decoder.decode(format().items!(parsed(openai(CHOICE, ',"usage":null'))));
    expect(text).not.toContain('usage');
    expect(text).not.toContain('chatcmpl-up');
    expect(text).not.toContain('gpt-4o-mini');
  });
});
