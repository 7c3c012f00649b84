/** Helpers the listener tests share: a raw HTTP/1.1 reply taken apart, and waiting on a condition. */

/** A raw reply's status, headers (lower-cased names) and body as it came (chunked framing included). */
export function parse(reply: string): { status: number; headers: Record<string, string>; body: string } {
  const at = reply.indexOf('\r\n\r\n');
  const [statusLine = '', ...lines] = reply.slice(0, at).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body: reply.slice(at + 4) };
}

/** Resolves once `test()` holds (polled every 5 ms); rejects after `ms`. */
export async function until(test: () => boolean, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!test()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
