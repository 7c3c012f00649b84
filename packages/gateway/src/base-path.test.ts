import { describe, expect, it } from 'vitest';
import { chatBody, setup } from '../test/test-harness';

describe('basePath', () => {
  it('serves the API under the prefix only; every other path is the plain-text 404', async () => {
    const t = await setup({ basePath: '/api/' });
    const models = await t.get('/api/v1/models');
    expect(models.status).toBe(200);
    expect(((await models.json()) as { object: string }).object).toBe('list');
    const chat = await t.post('/api/v1/chat/completions?x=1', chatBody());
    expect(chat.status).toBe(200);
    expect(chat.headers.get('x-request-id')).toMatch(/^req_/);
    for (const path of ['/v1/models', '/api', '/api/', '/apiv1/models', '/api2/v1/models', '/other/api/v1/models']) {
      const response = await t.get(path);
      expect(response.status, path).toBe(404);
      expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(response.headers.get('x-service-version')).toBe('tollgate/test');
      expect(await response.text()).toBe('Not Found');
    }
    expect((await t.get('/api/v1/chat/completions')).status).toBe(405);
    await expect(setup({ basePath: 'api' })).rejects.toThrow(/basePath must be a path starting with "\/"/);
  });
});
