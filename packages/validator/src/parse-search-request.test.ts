import { describe, expect, it } from 'vitest';
import { parseFetchRequest } from './parse-fetch-request';
import { parseSearchRequest } from './parse-search-request';

describe('parseSearchRequest', () => {
  it('defaults max_results to 10 and keeps a model', () => {
    expect(parseSearchRequest({ query: 'tollgate' })).toEqual({ ok: true, value: { query: 'tollgate', max_results: 10 } });
    expect(parseSearchRequest({ model: 'web', query: 'q', max_results: 20 })).toEqual({ ok: true, value: { model: 'web', query: 'q', max_results: 20 } });
  });

  it('refuses bad values and unlisted fields naming the field', () => {
    expect(parseSearchRequest({ query: 'q', max_results: 21 })).toEqual({
      ok: false,
      error: { code: 'invalid_parameter', message: 'max_results must be an integer from 1 to 20.' },
    });
    expect(parseSearchRequest({ query: 'q', page: 2 })).toEqual({
      ok: false,
      error: { code: 'invalid_parameter', message: 'page is not a field of this endpoint.' },
    });
    expect(parseSearchRequest({ query: 3 })).toMatchObject({ ok: false, error: { code: 'invalid_request_body' } });
    expect(parseSearchRequest({})).toEqual({ ok: false, error: { code: 'invalid_request_body', message: 'query is required.' } });
  });
});

describe('parseFetchRequest', () => {
  it('defaults the format to markdown', () => {
    expect(parseFetchRequest({ url: 'https://example.com/a?b' })).toEqual({ ok: true, value: { url: 'https://example.com/a?b', format: 'markdown' } });
    expect(parseFetchRequest({ url: 'http://example.com', format: 'text' })).toEqual({ ok: true, value: { url: 'http://example.com', format: 'text' } });
  });

  it('refuses any url that is not an absolute http(s) URL, naming url', () => {
    for (const url of [undefined, 5, '', '/relative', 'ftp://example.com/', 'file:///etc/passwd', 'javascript:alert(1)', 'http://']) {
      expect(parseFetchRequest(url === undefined ? {} : { url })).toEqual({
        ok: false,
        error: { code: 'invalid_parameter', message: 'url must be an absolute http or https URL.' },
      });
    }
  });

  it('refuses other fields and formats naming the field', () => {
    expect(parseFetchRequest({ url: 'https://a.b', headers: {} })).toEqual({
      ok: false,
      error: { code: 'invalid_parameter', message: 'headers is not a field of this endpoint.' },
    });
    expect(parseFetchRequest({ url: 'https://a.b', format: 'html' })).toEqual({
      ok: false,
      error: { code: 'invalid_parameter', message: 'format must be one of markdown, text.' },
    });
  });
});
