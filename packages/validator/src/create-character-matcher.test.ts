import type { ChatRequest } from '@tollgate/core';
import { describe, expect, it } from 'vitest';
import { firstSystemText, lastUserTextBytes } from './chat-text';
import { createCharacterMatcher } from './create-character-matcher';

/** This process's CPU time in ms: unlike wall time, it does not grow while other processes share the cores. */
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1_000;
}

describe('createCharacterMatcher', () => {
  const prompts = ['You are Aria, a cheerful guide to the city.', 'You are Aria, a grumpy pirate.', 'Short one', '   Leading space prompt that is long'];
  const matches = createCharacterMatcher(prompts);

  it('says whether a text opens with one of the prompts', () => {
    expect(matches('You are Aria, a cheerful guide to the city. Answer briefly.')).toBe(true);
    expect(matches('You are Aria, a grumpy pirate.')).toBe(true);
    expect(matches('  \nYou are Aria, a grumpy pirate. Arr.')).toBe(true);
    expect(matches('Short one more')).toBe(true);
    expect(matches('Leading space prompt that is long, and more')).toBe(true);
    expect(matches('You are Aria, a grumpy pirat')).toBe(false);
    expect(matches('Say: You are Aria, a grumpy pirate.')).toBe(false);
    expect(matches('Short on')).toBe(false);
    expect(matches('')).toBe(false);
  });

  it('ignores empty prompts and stays exact with thousands of prompts', () => {
    expect(createCharacterMatcher(['', '   '])('anything')).toBe(false);
    const many = Array.from({ length: 5000 }, (_, i) => `You are character number ${i}, who speaks softly.`);
    const matchMany = createCharacterMatcher(many);
    expect(matchMany('You are character number 4999, who speaks softly. Hello')).toBe(true);
    expect(matchMany('You are character number 5000, who speaks softly.')).toBe(false);
    const started = cpuMs();
    for (let i = 0; i < 10_000; i++) matchMany(`You are character number ${i % 6000}, who speaks softly. Hi`);
    expect(cpuMs() - started).toBeLessThan(500);
  });
});

describe('chat text', () => {
  const request = (messages: ChatRequest['messages']): ChatRequest => ({ model: 'm', messages, stream: false });

  it('takes the first system message, string or text parts', () => {
    expect(
      firstSystemText(
        request([
          { role: 'user', content: 'u' },
          { role: 'system', content: 'one' },
          { role: 'system', content: 'two' },
        ]),
      ),
    ).toBe('one');
    expect(
      firstSystemText(
        request([
          {
            role: 'system',
            content: [
              { type: 'text', text: 'You are ' },
              { type: 'image_url', image_url: { url: 'data:,' } },
              { type: 'text', text: 'Aria' },
            ],
          },
        ]),
      ),
    ).toBe('You are Aria');
    expect(firstSystemText(request([{ role: 'system', content: null }]))).toBe('');
    expect(firstSystemText(request([{ role: 'user', content: 'u' }]))).toBeUndefined();
  });

  it('counts the UTF-8 bytes of the last user message text', () => {
    const messages: ChatRequest['messages'] = [
      { role: 'user', content: 'first' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'é€' },
          { type: 'text', text: '😀' },
        ],
      },
      { role: 'assistant', content: 'reply' },
    ];
    expect(lastUserTextBytes(request(messages))).toBe(2 + 3 + 4);
    expect(lastUserTextBytes(request([{ role: 'system', content: 's' }]))).toBe(0);
  });

  it('counts the last user text in bytes as TextEncoder does, lone surrogates included', () => {
    for (const text of ['', 'abc', 'é', '€', '😀', '\ud800', 'a\udc00b', '\ud800\ud800', 'x'.repeat(8001)]) {
      const bytes = lastUserTextBytes(request([{ role: 'user', content: text }]));
      expect([text, bytes]).toEqual([text, new TextEncoder().encode(text).length]);
    }
  });
});
