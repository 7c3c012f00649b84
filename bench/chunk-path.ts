/**
 * A streamed chat's per-chunk path alone: the SSE body the fake OpenAI upstream sends the chat
 * bench (20 events: the role chunk, 17 content chunks, the finish chunk, the usage chunk, then
 * `[DONE]`), read into chunk batches by the OpenAI adapter and rewritten into the client's events
 * by the gateway's chat format, as one request of the server does. Prints the process's CPU µs per
 * request, the median of 5 rounds, as one JSON line: steadier than the server bench, so a change
 * of a few µs on this path shows.
 *
 * Run: npx tsx bench/chunk-path.ts [requests per round]
 */
import { createObfuscator } from '@tollgate/sse';
import { fakeOpenAI } from '@tollgate/testing';
import { chatSseFormat } from '../packages/gateway/src/chat-sse-format';
import { openaiChatBatches } from '../packages/providers/src/openai/openai-chat-stream';
import { cpuRounds } from './cpu-rounds';

const REQUESTS = Number(process.argv[2] ?? 20_000);

const fake = fakeOpenAI({ reply: 'The quick brown fox jumps over the lazy dog and the quick brown fox runs far away.' });
const reply = await fake.handle(
  new Request('http://127.0.0.1/v1/chat/completions', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer bench' },
    body: JSON.stringify({ model: 'gpt-4o-mini', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'Hi' }] }),
  }),
);
const body = new Uint8Array(await reply.arrayBuffer());

// The gateway's padding, as its runtime makes it (create-gateway.ts).
const obfuscate = createObfuscator();
let sent = 0;
/** One request's chunks: the body read in one piece (as one socket read brings it), every batch rewritten. */
const request = async () => {
  const response = new Response(body, { headers: { 'content-type': 'text/event-stream' } });
  const batches = openaiChatBatches({ response, abort: () => {}, unlink: () => {} }, undefined);
  const format = chatSseFormat({ id: 'chatcmpl-bench', model: 'bench', includeUsage: true, obfuscate, now: Date.now });
  for (let batch = await batches.read(); batch !== undefined; batch = await batches.read()) sent += format.items?.(batch)?.byteLength ?? 0;
  sent += format.done()?.byteLength ?? 0;
};

const { median, rounds } = await cpuRounds(async () => {
  for (let done = 0; done < REQUESTS; done++) await request();
}, REQUESTS);
console.log(
  JSON.stringify({
    requests: REQUESTS,
    bodyBytes: body.byteLength,
    cpuMicrosPerRequest: Number(median.toFixed(1)),
    rounds: rounds.map((figure) => Number(figure.toFixed(1))),
    sent: sent > 0,
  }),
);
