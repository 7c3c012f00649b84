/**
 * Child process of the benches: the loopback fake OpenAI upstream, in a process of its own so its
 * CPU time is not charged to the gateway or the bare proxy. With `process.argv[2]` (ms), every
 * streamed event waits that long first, so streams stay open (bench/open-streams.ts). Prints
 * `{"url":…}` on one line, then serves until its stdin closes.
 */
import { fakeOpenAI } from '@tollgate/testing';
import { listen } from '@tollgate/testing/server';

const dripMs = process.argv[2] === undefined ? undefined : Number(process.argv[2]);
// 17 words: streamed, 20 chunks (the role, a word each, the finish, the usage) and then [DONE].
const fake = fakeOpenAI({
  reply: 'The quick brown fox jumps over the lazy dog and the quick brown fox runs far away.',
  ...(dripMs === undefined ? {} : { faults: () => ({ kind: 'drip' as const, delayMs: dripMs }) }),
});
const server = await listen(fake.handle);
// The fake records every request for tests; a bench run would grow that list for nothing.
setInterval(() => {
  fake.requests.length = 0;
}, 1000).unref();
process.stdout.write(`${JSON.stringify({ url: server.url })}\n`);
process.stdin.resume();
process.stdin.on('end', () => void server.close().then(() => process.exit(0)));
