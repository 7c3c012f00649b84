import { describe, expect, it } from 'vitest';
import type { ChatRequest } from '@tollgate/core';
import { promptTokenBound } from './prompt-token-bound';

// The walk of measure-prompt.ts, through the bound (UTF-8 bytes, 8 a message): the parts whose
// counting no test pinned until mutation testing showed it (docs/testing.md).

const model: Parameters<typeof promptTokenBound>[1] = { id: 'fast', type: 'chat' };
const request = (messages: ChatRequest['messages'], extra: Partial<ChatRequest> = {}): ChatRequest => ({ model: 'fast', messages, stream: false, ...extra });

describe('measurePrompt, every part that reaches the prompt', () => {
  it('counts an object tool_choice as its JSON, and a string one not at all', () => {
    const toolChoice = { type: 'function', function: { name: 'get_weather' } } as const;
    const messages: ChatRequest['messages'] = [{ role: 'user', content: 'hi' }];
    expect(JSON.stringify(toolChoice).length).toBe(53);
    expect(promptTokenBound(request(messages, { tool_choice: toolChoice }), model)).toBe(2 + 8 + 53);
    expect(promptTokenBound(request(messages, { tool_choice: 'required' }), model)).toBe(2 + 8);
  });

  it('counts an assistant message without tool calls and a tool message without an id by their text', () => {
    const messages: ChatRequest['messages'] = [
      { role: 'assistant', content: 'ok' },
      { role: 'tool', content: 'sunny' },
    ];
    expect(promptTokenBound(request(messages), model)).toBe(2 + 8 + 5 + 8);
  });

  it('counts every key and string of another part type, nested arrays and objects included', () => {
    const part = { type: 'video_url', video_url: { url: 'x', frames: ['ab', 'c'], fps: 24, loop: true, poster: null, caption: undefined } };
    // type 4 + video_url 9 + video_url 9 + url 3 + x 1 + frames 6 + ab 2 + c 1 + fps 3 + 24 + loop 4 + 24 + poster 6 + 0 + caption 7 + 0
    expect(promptTokenBound(request([{ role: 'user', content: [part] }]), model)).toBe(103 + 8);
  });

  it('counts only a text part by its text alone: another part with a text field is counted whole', () => {
    const note = { type: 'input_note', text: 'abc' };
    expect(promptTokenBound(request([{ role: 'user', content: [note] }]), model)).toBe(4 + 10 + 4 + 3 + 8);
    // A text part whose text is no string (possible in the type) is counted as any other part.
    const odd = { type: 'text', text: 42 };
    expect(promptTokenBound(request([{ role: 'user', content: [odd] }]), model)).toBe(4 + 4 + 4 + 24 + 8);
  });
});
