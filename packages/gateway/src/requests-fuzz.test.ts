/**
 * Fuzz through `gateway.fetch`: random mutations of a valid chat body, on its structure and on its
 * text, only ever give 200 or a refusal from the catalogue (never a 500 or 503). Bounded in runs
 * and in time so CI stays fast.
 */
import { ERROR_CATALOGUE, isErrorCode } from '@tollgate/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { setup, type TestGateway } from '../test/test-harness';

const PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

/** A valid body that uses every listed field, every role and each kind of part. */
function validBody(): Record<string, unknown> {
  const call = { id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"q":"x"}' } };
  return {
    model: 'fast',
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'developer', content: [{ type: 'text', text: 'Answer in English.' }] },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image_url', image_url: { url: PNG, detail: 'low' } },
        ],
      },
      { role: 'assistant', content: null, tool_calls: [call] },
      { role: 'tool', content: 'found', tool_call_id: 'call_1' },
      { role: 'user', content: 'Thanks' },
    ],
    stream: false,
    stream_options: { include_usage: true },
    max_completion_tokens: 50,
    max_tokens: 60,
    reasoning_effort: 'low',
    tools: [{ type: 'function', function: { name: 'lookup', description: 'Looks up', parameters: { type: 'object', properties: { q: { type: 'string' } } } } }],
    tool_choice: { type: 'function', function: { name: 'lookup' } },
    parallel_tool_calls: true,
    temperature: 0.5,
  };
}

type Path = (string | number)[];

/** Every path to a value inside the body (not the body itself). */
function pathsOf(value: unknown, prefix: Path = [], out: Path[] = []): Path[] {
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      out.push([...prefix, index]);
      pathsOf(item, [...prefix, index], out);
    }
  } else if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      out.push([...prefix, key]);
      pathsOf(item, [...prefix, key], out);
    }
  }
  return out;
}

const PATHS = pathsOf(validBody());

type Mutation = { kind: 'set'; at: number; value: unknown } | { kind: 'delete'; at: number } | { kind: 'add'; at: number; key: string; value: unknown };

const fieldNames = fc.constantFrom(
  'model',
  'messages',
  'role',
  'content',
  'type',
  'text',
  'url',
  'image_url',
  'file',
  'file_data',
  'tool_calls',
  'tool_call_id',
  'name',
  'function',
  'max_tokens',
  'stream',
  'video_url',
  'n',
  '__proto__',
  'constructor',
);
const values = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom(
    'system',
    'user',
    'assistant',
    'tool',
    'robot',
    'text',
    'image_url',
    'video_url',
    'file',
    'function',
    'auto',
    'none',
    'high',
    'xhigh',
    'https://example.com/a.png',
    PNG,
    'data:',
    '',
    0,
    -1,
    1.5,
    4096,
    2 ** 53,
    null,
    true,
    [],
    {},
  ),
);
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('set' as const), at: fc.nat(PATHS.length - 1), value: values }),
  fc.record({ kind: fc.constant('delete' as const), at: fc.nat(PATHS.length - 1) }),
  fc.record({ kind: fc.constant('add' as const), at: fc.nat(PATHS.length - 1), key: fc.oneof(fieldNames, fc.string({ maxLength: 8 })), value: values }),
);

function mutate(body: Record<string, unknown>, change: Mutation): void {
  const path = PATHS[change.at] as Path;
  let parent: unknown = body;
  for (const step of path.slice(0, -1)) {
    if (typeof parent !== 'object' || parent === null) return;
    parent = (parent as Record<string | number, unknown>)[step];
  }
  if (typeof parent !== 'object' || parent === null) return;
  const holder = parent as Record<string | number, unknown>;
  const last = path[path.length - 1] as string | number;
  if (change.kind === 'set') holder[last] = change.value;
  else if (change.kind === 'delete') {
    if (Array.isArray(holder)) holder.splice(last as number, 1);
    else delete holder[last];
  } else {
    const target = holder[last];
    if (typeof target === 'object' && target !== null && !Array.isArray(target)) {
      Object.defineProperty(target, change.key, { value: change.value, enumerable: true, configurable: true, writable: true });
    }
  }
}

/** Asserts the reply is a 200 or a refusal of the catalogue with its envelope. */
async function expectCatalogueOutcome(t: TestGateway, response: Response, upstreamBefore: number): Promise<void> {
  expect(response.headers.get('x-service-version')).toBe('tollgate/test');
  if (response.status === 200) {
    await response.arrayBuffer();
    expect(t.fake.requests.length).toBe(upstreamBefore + 1);
    return;
  }
  const body = (await response.json()) as { error: { code: string; type: string; param: null } };
  expect(isErrorCode(body.error.code)).toBe(true);
  const entry = ERROR_CATALOGUE[body.error.code as keyof typeof ERROR_CATALOGUE];
  expect({ status: response.status, type: body.error.type, param: body.error.param }).toEqual({ status: entry.status, type: entry.type, param: null });
  // Refusals of the body; a mutated model name may also be unknown.
  expect([400, 404]).toContain(response.status);
  if (response.status === 404) expect(body.error.code).toBe('model_not_found');
  expect(response.headers.get('x-request-id')).toBeNull();
  expect(t.fake.requests.length).toBe(upstreamBefore);
}

async function send(t: TestGateway, text: string): Promise<Response> {
  // Requests are spread out on the manual clock so the plan's rate limit never answers.
  t.clock.advance(2_000);
  return t.post('/v1/chat/completions', text);
}

describe('fuzz through gateway.fetch', () => {
  it('the unmutated body is accepted', async () => {
    const t = await setup();
    const response = await send(t, JSON.stringify(validBody()));
    expect(response.status).toBe(200);
  });

  it('structural mutations give 200 or a catalogue refusal', async () => {
    const t = await setup();
    await fc.assert(
      fc.asyncProperty(fc.array(mutation, { minLength: 1, maxLength: 4 }), async (changes) => {
        const body = validBody();
        for (const change of changes) mutate(body, change);
        const before = t.fake.requests.length;
        await expectCatalogueOutcome(t, await send(t, JSON.stringify(body)), before);
      }),
      { numRuns: 150, interruptAfterTimeLimit: 4_000 },
    );
  });

  it('text mutations give 200 or a catalogue refusal', async () => {
    const t = await setup();
    const text = JSON.stringify(validBody());
    const splice = fc.record({
      at: fc.nat(text.length),
      remove: fc.nat(6),
      insert: fc.oneof(
        fc.string({ maxLength: 4 }),
        fc.constantFrom('"', '{', '}', '[', ']', ',', ':', '\\', '\\u', '"a":1,', '"model":"fast",', '\u0000', '\ud800'),
      ),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(splice, { minLength: 1, maxLength: 3 }), async (edits) => {
        let mutated = text;
        for (const edit of edits) mutated = mutated.slice(0, edit.at) + edit.insert + mutated.slice(edit.at + edit.remove);
        const before = t.fake.requests.length;
        await expectCatalogueOutcome(t, await send(t, mutated), before);
      }),
      { numRuns: 150, interruptAfterTimeLimit: 4_000 },
    );
  });
});
