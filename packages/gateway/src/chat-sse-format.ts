import { type ChatCompletionChunk, errorRecord, type Usage } from '@tollgate/core';
import type { ChunkBatch } from '@tollgate/providers';
import { SSE_DONE, SSE_KEEPALIVE, sseData, sseError } from '@tollgate/sse';
import type { DeliveringFormat } from './metered-stream';
import { readUsage } from './read-usage';

/** Options of {@link chatSseFormat}. */
export interface ChatSseFormatOptions {
  /** The `chatcmpl-` id every chunk carries. */
  id: string;
  /** The model id the client sent. */
  model: string;
  /** Whether the client asked for the usage chunk. */
  includeUsage: boolean;
  /**
   * The usage to show in the usage chunk when the upstream reported none (the estimate the account
   * is charged). Without it such a stream has no usage chunk even when the client asked for one.
   */
  usageFallback?: (deliveredText: string) => Usage;
  /**
   * What the request is charged, shown as the usage chunk's `cost_micros`: called once, before the
   * settle, with the usage reported (if any) and the text delivered; the settle must charge the same.
   */
  cost?: (reported: Usage | undefined, deliveredText: string) => number;
  /** Padding for the `obfuscation` field of every chunk. */
  obfuscate: () => string;
  /** The clock, for the usage chunk's `created` when no chunk came. */
  now: () => number;
}

/** The SSE rewrite of a chat stream, and what it delivered (for settlement). */
export type ChatSseFormat = DeliveringFormat<ChatCompletionChunk>;

const encoder = new TextEncoder();
const DONE = encoder.encode(SSE_DONE);
const KEEPALIVE = encoder.encode(SSE_KEEPALIVE);

/**
 * The client's SSE events from the provider's chunks: `id` and `model` rewritten, `obfuscation`
 * added, the usage chunk held back and sent just before `[DONE]` only when asked, `finish_reason: ""`
 * sent as null; each event spliced into the upstream's JSON text where the batch carries it and
 * {@link upstreamFields} allows, else one `JSON.stringify` of the chunk; one encoding per batch.
 */
export function chatSseFormat(options: ChatSseFormatOptions): ChatSseFormat {
  const { id, model, obfuscate } = options;
  let created: number | undefined;
  // What every spliced event begins with, up to its `created` value, and from after it to its first
  // upstream field; `lead` is the whole beginning (`data: ` included) for the `created` of `leadCreated`.
  const head = `data: {"id":${JSON.stringify(id)},"object":"chat.completion.chunk","created":`;
  const modelField = `,"model":${JSON.stringify(model)},`;
  let leadCreated: number | undefined;
  let lead = '';
  const prefix = new ChunkPrefix();
  /** The client's event for one chunk, or undefined for the usage chunk (sent, if asked, just before [DONE]). */
  const event = (chunk: ChatCompletionChunk, text: string | undefined): string | undefined => {
    created ??= chunk.created;
    if (chunk.usage) out.usage = readUsage(chunk.usage) ?? out.usage;
    if (!Array.isArray(chunk.choices) || chunk.choices.length === 0) return undefined;
    // The upstream's own text is spliced only where no choice needs a change.
    let untouched = true;
    for (const choice of chunk.choices) {
      if (choice.delta == null) {
        choice.delta = {};
        untouched = false;
      }
      const delta = choice.delta;
      // Some compatible servers send "" until the end; the spec's value there is null.
      const reason: unknown = choice.finish_reason;
      if (reason === '') {
        choice.finish_reason = null;
        untouched = false;
      }
      if (typeof delta.content === 'string') out.delivered += delta.content;
      if (delta.tool_calls) for (const call of delta.tool_calls) if (call.function?.arguments) out.delivered += call.function.arguments;
    }
    const obfuscation = obfuscate();
    const middle = untouched && text !== undefined ? upstreamFields(text, chunk, prefix) : undefined;
    if (middle !== undefined) {
      // An upstream sends one `created` for the whole stream: the lead is made once.
      if (chunk.created !== leadCreated) {
        leadCreated = chunk.created;
        lead = head + chunk.created + modelField;
      }
      return `${lead}${middle},"obfuscation":${JSON.stringify(obfuscation)}}\n\n`;
    }
    chunk.id = id;
    chunk.model = model;
    chunk.usage = undefined;
    chunk.obfuscation = obfuscation;
    return sseData(JSON.stringify(chunk));
  };
  // `usage` and `delivered` are fields, not getters: an object literal's getters (closures made per
  // call) gave each stream an accessor kept by V8 in the old generation, and with it this scope and
  // the request's (docs/benchmarks.md, "Issue #17, fifth pass").
  const out: { -readonly [K in keyof ChatSseFormat]: ChatSseFormat[K] } = {
    keepalive: KEEPALIVE,
    usage: undefined,
    delivered: '',
    item(chunk) {
      const text = event(chunk, undefined);
      return text === undefined ? undefined : encoder.encode(text);
    },
    items(chunks) {
      let text = '';
      const before = { delivered: out.delivered, usage: out.usage, created };
      try {
        const texts = (chunks as ChunkBatch<ChatCompletionChunk>).texts;
        for (let index = 0; index < chunks.length; index++) text += event(chunks[index] as ChatCompletionChunk, texts?.[index]) ?? '';
      } catch (error) {
        // The batch is not sent: none of it counts, neither its text nor the usage it carried.
        out.delivered = before.delivered;
        out.usage = before.usage;
        created = before.created;
        throw error;
      }
      return text === '' ? undefined : encoder.encode(text);
    },
    done() {
      const { usage, delivered } = out;
      const counted = options.includeUsage ? (usage ?? options.usageFallback?.(delivered)) : undefined;
      if (!counted) return DONE;
      const shown = options.cost ? { ...counted, cost_micros: options.cost(usage, delivered) } : counted;
      const usageChunk = JSON.stringify({
        id,
        object: 'chat.completion.chunk',
        created: created ?? Math.floor(options.now() / 1000),
        model,
        choices: [],
        usage: shown,
        obfuscation: obfuscate(),
      });
      return encoder.encode(sseData(usageChunk) + SSE_DONE);
    },
    errorEvent: (code) => encoder.encode(sseError(errorRecord(code))),
  };
  return out;
}

const OBFUSCATION_OPEN = ',"obfuscation":"';
const NULL_USAGE = ',"usage":null';

/** Whether `text` has `part` just before `end`: `endsWith(part, end)`, with a slice compared whole (see {@link upstreamFields}). */
function endsAt(text: string, part: string, end: number): boolean {
  return end >= part.length && text.slice(end - part.length, end) === part;
}

/**
 * The beginning a stream's spliced chunks share, `{"id":"<id>","object":"chat.completion.chunk",
 * "created":<created>,"model":"<model>",`, made once for the values it was made of (an upstream
 * sends the same three in every chunk of a stream) and reused while they stay the same.
 */
export class ChunkPrefix {
  id: string | undefined;
  created: number | undefined;
  model: string | undefined;
  text = '';

  /** The prefix of a chunk with these values. */
  of(id: string, created: number, model: string): string {
    if (id !== this.id || created !== this.created || model !== this.model) {
      this.id = id;
      this.created = created;
      this.model = model;
      this.text = `{"id":"${id}","object":"chat.completion.chunk","created":${created},"model":"${model}",`;
    }
    return this.text;
  }
}

/**
 * The members of a chunk's upstream JSON `text` between its `model` and its end, when the text has
 * the shape OpenAI sends — `{"id":…,"object":"chat.completion.chunk","created":…,"model":…,` first,
 * then the other members, then `"usage":null` and `"obfuscation":…` (each if present) last, with
 * no whitespace, no second member of those names — and says exactly what `chunk` holds; undefined otherwise (the chunk is then
 * serialised). Each part is matched as the text of the parsed value, so a value that JSON would
 * escape never matches; a suffix ending in the one closing brace is a member of the top-level object.
 * `prefix` keeps the stream's beginning from one chunk to the next (a new one for a lone chunk).
 */
export function upstreamFields(text: string, chunk: ChatCompletionChunk, prefix: ChunkPrefix = new ChunkPrefix()): string | undefined {
  const { id, model, created, obfuscation } = chunk;
  if (typeof id !== 'string' || typeof model !== 'string' || typeof created !== 'number' || chunk.object !== 'chat.completion.chunk') return undefined;
  // The parsed values written back as raw text: a value JSON escapes (a quote, a backslash) makes a
  // prefix the text cannot start with, as a `created` JSON wrote otherwise (1e3, 1.0) does.
  const head = prefix.of(id, created, model);
  // Slices compared whole, here and in `endsAt`: V8's startsWith and endsWith compare a character
  // at a time (some 3 ns each: ten times a slice and compare on a prefix this long).
  if (text.slice(0, head.length) !== head || text.charCodeAt(text.length - 1) !== 125 /* } */) return undefined;
  const start = head.length;
  let end = text.length - 1;
  if (typeof obfuscation === 'string') {
    // `,"obfuscation":"<obfuscation>"` just before the closing brace.
    if (text.charCodeAt(end - 1) !== 34 /* " */ || !endsAt(text, obfuscation, end - 1)) return undefined;
    end -= obfuscation.length + 1;
    if (!endsAt(text, OBFUSCATION_OPEN, end)) return undefined;
    end -= OBFUSCATION_OPEN.length;
  } else if (obfuscation !== undefined) return undefined;
  if (chunk.usage === null) {
    if (!endsAt(text, NULL_USAGE, end)) return undefined;
    end -= NULL_USAGE.length;
  } else if (chunk.usage !== undefined) return undefined;
  if (end <= start) return undefined;
  const middle = text.slice(start, end);
  // A line break (an event of several data lines: JSON whitespace, which would cut the client's
  // event), a second member of a name the splice writes (JSON.parse keeps the last of duplicates:
  // the client would read the first), or two choices lists: serialised instead. Inside a string a
  // quote is escaped, so these texts match member names only (a nested one too: serialised). One
  // scan finds them all: any match but the first `"choices":` refuses.
  RESERVED.lastIndex = 0;
  let choices = 0;
  while (RESERVED.test(middle)) {
    const matched = RESERVED.lastIndex;
    if (middle.charCodeAt(matched - 1) !== 58 /* : */ || middle.charCodeAt(matched - 3) !== 115 /* s */ || ++choices > 1) return undefined;
  }
  return middle;
}

/**
 * The texts {@link upstreamFields} refuses in a chunk's middle, but for one `"choices":`: the one
 * name here whose match ends in `s":` (a line break's match ends in the line break).
 */
const RESERVED = /[\r\n]|"(?:id|object|created|model|usage|obfuscation|choices)":/g;
