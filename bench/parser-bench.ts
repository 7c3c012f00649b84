/**
 * Throughput of the validator's strict JSON parser next to `JSON.parse`, on chat bodies that are
 * mostly base64 image data (the bodies that reach the 32 MiB cap in practice).
 * Run: `npx tsx bench/parser-bench.ts`.
 */
import { parseJsonStrict } from '@tollgate/validator';

/** One measured body size. */
export interface Row {
  /** Body label, e.g. `1 MiB`. */
  body: string;
  /** Body size in bytes. */
  bytes: number;
  /** MB/s (10^6 bytes a second) of `parseJsonStrict`, from bytes. */
  strictMBps: number;
  /** MB/s of `JSON.parse(new TextDecoder().decode(bytes))`. */
  jsonParseMBps: number;
  /** strict / JSON.parse: the target is at least 0.5. */
  ratio: number;
}

/** A chat body of about `size` bytes: a few messages and one large inline image. */
export function base64ChatBody(size: number): Uint8Array {
  const head = {
    model: 'fast',
    stream: true,
    messages: [
      { role: 'system', content: 'You describe images precisely.\nAnswer in "plain" words.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is in this picture?' },
          { type: 'image_url', image_url: { url: '', detail: 'high' } },
        ],
      },
    ],
  };
  const frame = JSON.stringify(head);
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  const dataLength = Math.max(0, size - frame.length - 'data:image/png;base64,'.length);
  let seed = 12345;
  const block = Array.from({ length: 4096 }, () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return alphabet[seed & 63];
  }).join('');
  const data = block.repeat(Math.ceil(dataLength / block.length)).slice(0, dataLength);
  const body = frame.replace('"url":""', `"url":"data:image/png;base64,${data}"`);
  return new TextEncoder().encode(body);
}

function timeIt(run: () => void, budgetMs: number): number {
  run(); // warm up
  let rounds = 0;
  const started = performance.now();
  let elapsed = 0;
  do {
    run();
    rounds++;
    elapsed = performance.now() - started;
  } while (elapsed < budgetMs);
  return elapsed / rounds;
}

/** Options of {@link runParserBench}. */
export interface ParserBenchOptions {
  /** Milliseconds of repeated parsing per parser and size (default 300). */
  budgetMs?: number;
  /** Body sizes in bytes (default 1 MiB and 32 MiB). */
  sizes?: number[];
}

const sizeLabel = (size: number) => (size >= 1 << 20 ? `${size / (1 << 20)} MiB` : `${size / 1024} KiB`);

/** Measures both parsers on a 1 MiB and a 32 MiB body; about a second in all. */
export async function runParserBench(options: ParserBenchOptions = {}): Promise<Row[]> {
  const budgetMs = options.budgetMs ?? 300;
  const rows: Row[] = [];
  for (const size of options.sizes ?? [1 << 20, 32 << 20]) {
    const label = sizeLabel(size);
    const bytes = base64ChatBody(size);
    const decoder = new TextDecoder();
    const strictMs = timeIt(() => {
      if (!parseJsonStrict(bytes).ok) throw new Error('the bench body did not parse');
    }, budgetMs);
    const jsonMs = timeIt(() => JSON.parse(decoder.decode(bytes)), budgetMs);
    const strictMBps = bytes.length / 1e3 / strictMs;
    const jsonParseMBps = bytes.length / 1e3 / jsonMs;
    rows.push({ body: label, bytes: bytes.length, strictMBps, jsonParseMBps, ratio: strictMBps / jsonParseMBps });
  }
  return rows;
}

const direct = typeof process !== 'undefined' && process.argv[1] !== undefined && import.meta.url.endsWith(process.argv[1].replace(/\\/g, '/'));
if (direct) {
  const rows = await runParserBench();
  console.log('body     bytes      parseJsonStrict MB/s  JSON.parse MB/s  ratio');
  for (const row of rows) {
    console.log(
      `${row.body.padEnd(8)} ${String(row.bytes).padEnd(10)} ${row.strictMBps.toFixed(0).padStart(20)}  ${row.jsonParseMBps.toFixed(0).padStart(15)}  ${row.ratio.toFixed(2)}`,
    );
  }
}
