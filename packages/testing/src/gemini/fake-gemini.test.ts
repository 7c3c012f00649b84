import { describe, expect, it } from 'vitest';
import { fakeGemini } from './fake-gemini';

const BASE = { contents: [{ role: 'user', parts: [{ text: 'Hi there' }] }] };
const URL_25 = 'http://fake/v1beta/models/gemini-2.5-flash';

function post(fake: ReturnType<typeof fakeGemini>, body: unknown, url = `${URL_25}:generateContent`, key: string | undefined = 'k') {
  return fake.fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { 'x-goog-api-key': key } : {}) },
    body: JSON.stringify(body),
  });
}

describe('fakeGemini', () => {
  it('answers like the API: candidates, finishReason, usageMetadata', async () => {
    const body = await (await post(fakeGemini({ reply: 'One two three.' }), BASE)).json();
    expect(body.candidates).toEqual([{ content: { parts: [{ text: 'One two three.' }], role: 'model' }, finishReason: 'STOP', index: 0 }]);
    expect(body.usageMetadata).toEqual({
      promptTokenCount: 2,
      candidatesTokenCount: 3,
      totalTokenCount: 5,
      promptTokensDetails: [{ modality: 'TEXT', tokenCount: 2 }],
    });
    expect(body.modelVersion).toBe('gemini-2.5-flash');
  });

  it('streams whole responses as CRLF-terminated SSE events, the last with the finish and usage', async () => {
    const response = await post(fakeGemini({ reply: 'One two' }), BASE, `${URL_25}:streamGenerateContent?alt=sse`);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const text = await response.text();
    const events = text
      .split('\r\n\r\n')
      .filter(Boolean)
      .map((event) => JSON.parse(event.replace(/^data: /, '')));
    expect(events.map((event) => event.candidates[0].content.parts[0].text)).toEqual(['One', ' two']);
    expect(events.map((event) => event.candidates[0].finishReason)).toEqual([undefined, 'STOP']);
    expect(events[1].usageMetadata).toMatchObject({ promptTokenCount: 2, candidatesTokenCount: 2, totalTokenCount: 4 });
  });

  it('answers streamGenerateContent without alt=sse as one JSON array', async () => {
    const body = await (await post(fakeGemini({ reply: 'One two' }), BASE, `${URL_25}:streamGenerateContent`)).json();
    expect(body).toHaveLength(2);
  });

  it('reports thoughts apart from candidates when asked to think, and cached tokens', async () => {
    const fake = fakeGemini({ reply: 'Yes.', thinking: 'a b c', cachedTokens: 1 });
    const body = await (await post(fake, { ...BASE, generationConfig: { thinkingConfig: { thinkingBudget: 1024 } } })).json();
    expect(body.usageMetadata).toMatchObject({
      promptTokenCount: 2,
      candidatesTokenCount: 1,
      thoughtsTokenCount: 3,
      cachedContentTokenCount: 1,
      totalTokenCount: 6,
    });
    expect(body.candidates[0].content.parts).toEqual([{ text: 'Yes.' }]);
  });

  const refusals: [string, unknown, string, string][] = [
    ['an assistant role', { contents: [{ role: 'assistant', parts: [{ text: 'x' }] }] }, 'gemini-2.5-flash', 'Please use a valid role: user, model.'],
    ['an unknown field', { ...BASE, max_tokens: 5 }, 'gemini-2.5-flash', 'Invalid JSON payload received. Unknown name "max_tokens": Cannot find field.'],
    ['empty contents', { contents: [] }, 'gemini-2.5-flash', '* GenerateContentRequest.contents: contents is not specified\n'],
    [
      'a thinking level on 2.5',
      { ...BASE, generationConfig: { thinkingConfig: { thinkingLevel: 'high' } } },
      'gemini-2.5-flash',
      'Thinking level is not supported for this model.',
    ],
    [
      'budget 0 on 2.5 Pro',
      { ...BASE, generationConfig: { thinkingConfig: { thinkingBudget: 0 } } },
      'gemini-2.5-pro',
      'Budget 0 is invalid. This model only works in thinking mode.',
    ],
    [
      'fewer responses than calls',
      {
        contents: [
          BASE.contents[0],
          { role: 'model', parts: [{ functionCall: { name: 'f', args: {} } }, { functionCall: { name: 'f', args: {} } }] },
          { role: 'user', parts: [{ functionResponse: { name: 'f', response: {} } }] },
        ],
      },
      'gemini-2.5-flash',
      'Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.',
    ],
    [
      'an unsigned replayed call on Gemini 3',
      {
        contents: [
          BASE.contents[0],
          { role: 'model', parts: [{ functionCall: { name: 'lookup', args: {} } }] },
          { role: 'user', parts: [{ functionResponse: { name: 'lookup', response: {} } }] },
        ],
      },
      'gemini-3-pro-preview',
      'Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:lookup` , position 2. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.',
    ],
  ];
  for (const [name, body, model, message] of refusals) {
    it(`refuses ${name} with 400 INVALID_ARGUMENT`, async () => {
      const response = await post(fakeGemini(), body, `http://fake/v1beta/models/${model}:generateContent`);
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({ error: { code: 400, message, status: 'INVALID_ARGUMENT' } });
    });
  }

  it('refuses a wrong key with 400 API_KEY_INVALID and a missing one with 403', async () => {
    const fake = fakeGemini({ apiKey: 'right' });
    const wrong = await (await post(fake, BASE, undefined, 'wrong')).json();
    expect(wrong.error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT', message: 'API key not valid. Please pass a valid API key.' });
    expect(wrong.error.details[0]).toMatchObject({ reason: 'API_KEY_INVALID' });
    expect((await post(fake, BASE, undefined, '')).status).toBe(403);
  });

  it('renders a 429 fault with RetryInfo and a content_filter fault as a blocked prompt', async () => {
    const fake = fakeGemini({
      faults: [
        { kind: 'status', status: 429, retryAfter: 41 },
        { kind: 'status', status: 400, code: 'content_filter' },
      ],
    });
    const limited = await post(fake, BASE);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBeNull();
    const details = (await limited.json()).error.details as { '@type': string; retryDelay?: string }[];
    expect(details.find((detail) => detail['@type'].endsWith('RetryInfo'))!.retryDelay).toBe('41s');
    const blocked = await post(fake, BASE);
    expect(blocked.status).toBe(200);
    expect(await blocked.json()).toMatchObject({ promptFeedback: { blockReason: 'SAFETY' } });
  });

  it('answers IMAGE requests with an inline image', async () => {
    const body = await (
      await post(
        fakeGemini(),
        { ...BASE, generationConfig: { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '1:1' } } },
        'http://fake/v1beta/models/gemini-2.5-flash-image:generateContent',
      )
    ).json();
    const part = body.candidates[0].content.parts[0];
    expect(part.inlineData.mimeType).toBe('image/png');
    const bytes = atob(part.inlineData.data);
    expect(bytes.slice(1, 4)).toBe('PNG');
    // IHDR width and height: 1:1 at 1K is 1024 x 1024.
    const view = new DataView(Uint8Array.from(bytes.slice(16, 24), (char) => char.charCodeAt(0)).buffer);
    expect([view.getUint32(0), view.getUint32(4)]).toEqual([1024, 1024]);
  });

  it('closes the body when the client cancels a stalled stream', async () => {
    const fake = fakeGemini({ reply: 'one two three four', faults: [{ kind: 'stall', afterChunks: 1 }] });
    const reader = (await post(fake, BASE, `${URL_25}:streamGenerateContent?alt=sse`)).body!.getReader();
    await reader.read();
    expect(fake.open).toBe(1);
    await reader.cancel();
    expect(fake.open).toBe(0);
  });
});
