/**
 * Child process of the open-streams bench: a loopback fake OpenAI upstream whose streams drip, one
 * event every `process.argv[2]` ms (default 250), so streams stay open. Prints `{"url":…}` on one
 * line, then serves until its stdin closes.
 */
import { fakeOpenAI } from '@tollgate/testing';
import { listen } from '@tollgate/testing/server';

const delayMs = Number(process.argv[2] ?? 250);
const fake = fakeOpenAI({
  reply: 'one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen',
  faults: () => ({ kind: 'drip', delayMs }),
});
const server = await listen(fake.handle);
setInterval(() => {
  fake.requests.length = 0;
}, 1000).unref();
process.stdout.write(`${JSON.stringify({ url: server.url })}\n`);
process.stdin.resume();
process.stdin.on('end', () => void server.close().then(() => process.exit(0)));
