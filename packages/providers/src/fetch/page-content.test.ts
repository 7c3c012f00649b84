import { beforeEach, describe, expect, it, vi } from 'vitest';

let loads = 0;

describe('pageContent: the HTML converter (turndown) loads lazily', () => {
  // Fresh modules per test, so the converter's memo starts empty, and a mock that counts its loads.
  beforeEach(() => {
    vi.resetModules();
    loads = 0;
    vi.doMock('./convert-html', async (importOriginal) => {
      loads++;
      return await importOriginal();
    });
  });

  it('importing the package and passing text through load no converter; the first HTML page loads it once', async () => {
    const providers = await import('../index');
    expect(typeof providers.createPageFetcher).toBe('function');
    const { pageContent } = await import('./page-content');
    expect(await pageContent('text', 'plain words', 'markdown', 'https://example.com/')).toEqual({ title: null, content: 'plain words' });
    expect(loads).toBe(0);

    const html = '<title>T</title><main><h1>Hi</h1></main>';
    expect(await pageContent('html', html, 'markdown', 'https://example.com/')).toEqual({ title: 'T', content: '# Hi' });
    expect(await pageContent('html', html, 'text', 'https://example.com/')).toEqual({ title: 'T', content: 'Hi' });
    expect(loads).toBe(1);
  });

  it('a page fetcher starts loading it when created, before any page', async () => {
    const { createPageFetcher } = await import('./create-page-fetcher');
    expect(loads).toBe(0);
    createPageFetcher({ resolve: async () => ['93.184.215.14'], transport: async () => new Response('') });
    await vi.waitFor(() => expect(loads).toBe(1));
  });
});
