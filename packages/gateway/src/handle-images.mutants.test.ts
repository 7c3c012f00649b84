/**
 * Image money rules that no other test pinned: bytes an image upstream returns that are no known
 * image are not an image delivered and not paid for, and when none is an image the request fails
 * as the spec's upstream_error with nothing charged; the charge's ledger entry says what it paid
 * for (the usage history).
 */
import type { ModelConfig } from '@tollgate/core';
import type { GeneratedImage } from '@tollgate/providers';
import { describe, expect, it } from 'vitest';
import { setup } from '../test/test-harness';

const START = 10_000_000;
const PER_IMAGE = 40_000;

/** A PNG signature and IHDR of the given width: enough for the gateway's sniffing. */
function png(width: number): string {
  const be32 = (value: number) => [value >>> 24, (value >> 16) & 255, (value >> 8) & 255, value & 255];
  const ascii = (text: string) => [...text].map((char) => char.charCodeAt(0));
  const bytes = [0x89, ...ascii('PNG\r\n\x1a\n'), ...be32(13), ...ascii('IHDR'), ...be32(width), ...be32(8), 8, 2, 0, 0, 0, 0, 0, 0, 0];
  return btoa(String.fromCharCode(...bytes));
}

/** Base64 of bytes that are no image, though the upstream labels them PNG. */
const NOT_AN_IMAGE = btoa('an error page, not an image');

const MODELS: ModelConfig[] = [{ id: 'painter', type: 'image', provider: 'upstream', price: { micros_per_image: PER_IMAGE, micros_per_reference: 0 } }];

/** An upstream returning the given images, whatever was asked. */
function upstream(images: string[]) {
  return {
    kind: 'upstream',
    zeroDataRetention: false,
    async images(): Promise<GeneratedImage[]> {
      return images.map((b64_json) => ({ b64_json, mime_type: 'image/png' }));
    },
  };
}

async function charges(t: Awaited<ReturnType<typeof setup>>) {
  return (await t.store.entries(t.accountId)).filter((entry) => entry.kind === 'charge').map((entry) => ({ micros: entry.micros, meta: entry.meta }));
}

describe('images: only known images are delivered and paid for', () => {
  it('an upstream reply that is no image among three is dropped: two delivered, two charged, the entry says so', async () => {
    const t = await setup({ models: MODELS, providers: { upstream: upstream([png(1), NOT_AN_IMAGE, png(3)]) } });
    const response = await t.post('/v1/images/generations', { model: 'painter', prompt: 'a lighthouse', n: 3 });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { data: { b64_json: string; mime_type: string }[] };
    expect(body.data).toEqual([
      { b64_json: png(1), mime_type: 'image/png' },
      { b64_json: png(3), mime_type: 'image/png' },
    ]);
    expect(await t.balance()).toEqual({ balance: START - 2 * PER_IMAGE, held: 0, available: START - 2 * PER_IMAGE });
    expect(await charges(t)).toEqual([{ micros: -2 * PER_IMAGE, meta: { model: 'painter', images: 2, references: 0 } }]);
  });

  it('when nothing returned is an image: 502 upstream_error, the hold released, nothing charged', async () => {
    const t = await setup({ models: MODELS, providers: { upstream: upstream([NOT_AN_IMAGE, NOT_AN_IMAGE]) } });
    const response = await t.post('/v1/images/generations', { model: 'painter', prompt: 'a lighthouse', n: 2 });
    expect(response.status).toBe(502);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('upstream_error');
    expect(await t.balance()).toEqual({ balance: START, held: 0, available: START });
    expect(await charges(t)).toEqual([]);
  });
});
