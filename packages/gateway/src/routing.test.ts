import { describe, expect, it } from 'vitest';
import { setup } from '../test/test-harness';

describe('routing and the model list', () => {
  it('answers unknown paths 404 and wrong methods 405 as plain text, with the version and no CORS', async () => {
    const t = await setup();
    const missing = await t.get('/v1/nothing');
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(missing.headers.get('x-service-version')).toBe('tollgate/test');
    expect(await missing.text()).toBe('Not Found');
    const wrong = await t.get('/v1/chat/completions');
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('content-type')).toMatch(/^text\/plain/);
    const options = await t.gateway.fetch(new Request('http://gateway.test/v1/models', { method: 'OPTIONS', headers: { origin: 'https://evil.example' } }));
    expect(options.status).toBe(405);
    for (const response of [missing, wrong, options]) {
      for (const [name] of response.headers) expect(name.startsWith('access-control-')).toBe(false);
    }
  });

  it('lists the models with only the record fields: routing and settings stay private', async () => {
    const t = await setup();
    const response = await t.get('/v1/models');
    expect(response.status).toBe(200);
    expect(response.headers.get('x-service-version')).toBe('tollgate/test');
    expect(response.headers.get('x-request-id')).toBeNull();
    const body = (await response.json()) as { object: string; data: Record<string, unknown>[] };
    expect(body.object).toBe('list');
    expect(body.data.map((model) => model.id)).toEqual(['fast', 'smart', 'painter']);
    expect(body.data[0]).toEqual({
      id: 'fast',
      object: 'model',
      created: Math.floor(t.clock.now() / 1000),
      owned_by: 'test',
      tier: 'anon',
      type: 'chat',
      label: 'Fast',
      plan: 'free',
      input_modalities: ['text', 'image'],
      context_tokens: 100_000,
      max_output_tokens: 1_000,
      price: { prompt_micros_per_mtok: 1_000_000, completion_micros_per_mtok: 2_000_000, min_hold_micros: 50 },
    });
    expect(body.data[2]).toEqual({
      id: 'painter',
      object: 'model',
      created: Math.floor(t.clock.now() / 1000),
      owned_by: 'local',
      tier: 'anon',
      type: 'image',
      label: 'painter',
      plan: 'free',
      price: { micros_per_image: 40_000, micros_per_reference: 5_000 },
    });
    const text = JSON.stringify(body);
    for (const secret of ['provider', 'upstream', 'routes', 'default_output_tokens', 'max_reference_images', 'resolutions', 'qualities']) {
      expect(text).not.toContain(`"${secret}"`);
    }
  });

  it('is free: listing models needs no balance', async () => {
    const t = await setup({ credits: 0 });
    expect((await t.get('/v1/models')).status).toBe(200);
  });

  it('refuses configuration errors at start, never per request', async () => {
    await expect(
      setup({
        models: [
          {
            id: 'x',
            type: 'chat',
            provider: 'nowhere',
            max_output_tokens: 10,
            price: { prompt_micros_per_mtok: 1, completion_micros_per_mtok: 1, min_hold_micros: 0 },
          },
        ],
      }),
    ).rejects.toThrow(/provider "nowhere" is not configured/);
    await expect(setup({ models: [{ id: 'x', type: 'chat', provider: 'local', max_output_tokens: 10 }] })).rejects.toThrow(/x/);
    await expect(setup({ fetchMicrosPerCall: 1.5 })).rejects.toThrow(/fetchMicrosPerCall must be a non-negative whole number/);
    await expect(setup({ fetchMicrosPerCall: -1 })).rejects.toThrow(/fetchMicrosPerCall/);
  });
});
