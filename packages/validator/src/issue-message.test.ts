import { describe, expect, it } from 'vitest';
import { parseChatRequest } from './parse-chat-request';
import { parseImageRequest } from './parse-image-request';

const messages = [{ role: 'user', content: 'Hi' }];

describe('refusal messages describe the client’s mistake', () => {
  it('an empty model is “must not be empty”, not a wrong JSON type', () => {
    expect(parseChatRequest({ model: '', messages })).toEqual({
      ok: false,
      error: { code: 'invalid_request_body', message: 'model must not be empty.' },
    });
    const image = parseImageRequest({ model: '', prompt: 'a fox' });
    expect(image.ok).toBe(false);
    if (!image.ok) expect(image.error.message).toBe('model must not be empty.');
  });

  it('a model of the wrong JSON type still says so', () => {
    expect(parseChatRequest({ model: 7, messages })).toEqual({
      ok: false,
      error: { code: 'invalid_request_body', message: 'model has the wrong JSON type: expected string, received 7.' },
    });
  });
});
