/**
 * Child process of the chat bench: the loopback fake OpenAI upstream, in a process of its own so
 * its CPU time is not charged to the gateway or the bare proxy. Prints `{"url":…}` on one line,
 * then serves until its stdin closes.
 */
import { fakeOpenAI } from '@tollgate/testing';
import { listen } from '@tollgate/testing/server';

// 17 words: streamed, 20 chunks (the role, a word each, the finish, the usage) and then [DONE].
const fake = fakeOpenAI({ reply: 'The quick brown fox jumps over the lazy dog and the quick brown fox runs far away.' });
const server = await listen(fake.handle);
// The fake records every request for tests; a bench run would grow that list for nothing.
setInterval(() => {
  fake.requests.length = 0;
}, 1000).unref();
process.stdout.write(`${JSON.stringify({ url: server.url })}\n`);
process.stdin.resume();
process.stdin.on('end', () => void server.close().then(() => process.exit(0)));
