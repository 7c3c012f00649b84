/**
 * Chat money rules that no other test pinned: a whole reply without usage is charged the estimate
 * of the prompt and of everything it delivered (text and tool-call arguments); a prompt count
 * reported beyond the hold's bound is billed at the bound with the excess on the entry; a streamed
 * request always asks its upstream for usage.
 */
import { chatCostMicros, estimateCompletionTokens, estimatePromptTokens, promptTokenBound } from '@tollgate/billing';
import type { ChatCompletion, ChatModelConfig, ChatRequest } from '@tollgate/core';
import type { ChatProvider } from '@tollgate/providers';
import { describe, expect, it } from 'vitest';
import { CHAT_PRICE, chatBody, readEvents, setup, testModels } from '../test/test-harness';

const START = 10_000_000;

/** A chat upstream whose whole reply is `completion`, whatever was asked. */
function replying(completion: () => ChatCompletion): ChatProvider {
  return {
    kind: 'scripted',
    zeroDataRetention: false,
    chat: async () => completion(),
    chatStream: async () => {
      throw new Error('not streamed in these tests');
    },
  };
}

function completion(usage: ChatCompletion['usage'] | undefined): ChatCompletion {
  const reply: ChatCompletion = {
    id: 'upstream-id',
    object: 'chat.completion',
    created: 1,
    model: 'upstream',
    choices: [
      {
        index: 0,
        finish_reason: 'tool_calls',
        message: {
          role: 'assistant',
          content: 'Hello world!',
          refusal: null,
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"q":"tollgate"}' } }],
        },
      },
    ],
  };
  if (usage) reply.usage = usage;
  return reply;
}

const fast = (): ChatModelConfig => {
  const model = testModels()[0];
  if (model?.type !== 'chat') throw new Error('the first test model is a chat model');
  return model;
};
/** The chat models of the harness (its image model needs an image provider). */
const CHAT_MODELS = testModels().filter((model) => model.type === 'chat');
const REQUEST: ChatRequest = { model: 'fast', stream: false, messages: [{ role: 'user', content: 'Hello there' }] };

async function charges(t: Awaited<ReturnType<typeof setup>>) {
  return (await t.store.entries(t.accountId)).filter((entry) => entry.kind === 'charge').map((entry) => ({ micros: entry.micros, meta: entry.meta }));
}

describe('chat charges', () => {
  it('a whole reply without usage pays the prompt estimate and its delivered text and tool-call arguments', async () => {
    const t = await setup({ models: CHAT_MODELS, providers: { local: replying(() => completion(undefined)) } });
    const response = await t.post('/v1/chat/completions', chatBody());
    expect(response.status).toBe(200);
    const prompt = estimatePromptTokens(REQUEST, fast());
    const delivered = estimateCompletionTokens('Hello world!{"q":"tollgate"}');
    expect(delivered).toBe(7);
    const cost = chatCostMicros(CHAT_PRICE, { prompt_tokens: prompt, completion_tokens: delivered });
    expect(await charges(t)).toEqual([{ micros: -cost, meta: { model: 'fast', prompt_tokens: prompt, completion_tokens: delivered, outcome: 'no_usage' } }]);
    expect(await t.balance()).toEqual({ balance: START - cost, held: 0, available: START - cost });
  });

  it('a prompt count reported beyond the hold’s bound is billed at the bound, the excess on the entry', async () => {
    const bound = promptTokenBound(REQUEST, fast());
    const usage = { prompt_tokens: bound + 1_000, completion_tokens: 3, total_tokens: bound + 1_003 };
    const t = await setup({ models: CHAT_MODELS, providers: { local: replying(() => completion(usage)) } });
    const response = await t.post('/v1/chat/completions', chatBody());
    expect(response.status).toBe(200);
    const cost = chatCostMicros(CHAT_PRICE, { prompt_tokens: bound, completion_tokens: 3 });
    expect(await charges(t)).toEqual([
      {
        micros: -cost,
        meta: { model: 'fast', prompt_tokens: bound, completion_tokens: 3, outcome: 'done', usage_over_limit: { prompt_tokens: 1_000, completion_tokens: 0 } },
      },
    ]);
    expect(t.logs.at(-1)).toMatchObject({ usageOverLimit: { promptTokens: 1_000, completionTokens: 0 }, costMicros: cost });
  });

  it('a streamed request asks its upstream for usage, whether or not the client did', async () => {
    const t = await setup();
    await readEvents(await t.post('/v1/chat/completions', chatBody({ stream: true })));
    expect(t.fake.requests.map((request) => request.body.stream_options)).toEqual([{ include_usage: true }]);
  });
});
