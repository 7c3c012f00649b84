import { GatewayError, HEADER, type ErrorCode, type Funding, type LeanReply } from '@tollgate/core';

/** The headers of a request that started (was held for): request id and funding. */
export interface StartedHeaders {
  requestId: string;
  funding: Funding;
}

/** Builds replies with `X-Service-Version` on every one. */
export interface Replies {
  /** Plain-text 404 or 405 for paths and methods the API does not serve. */
  plain(status: 404 | 405, text: string): Response;
  /** A JSON error reply; `started` adds X-Request-Id and X-Funding for errors after the request started. */
  error(error: GatewayError | ErrorCode, started?: StartedHeaders): Response;
  /** A JSON 200 reply from an already serialised body; made by `lean` when the request offers one (`leanReply` of @tollgate/core). */
  json(body: string, started?: StartedHeaders, extra?: Record<string, string>, lean?: LeanReply): Response;
  /** Headers for a started request's 200. */
  headers(started: StartedHeaders, contentType: string, extra?: Record<string, string>): Record<string, string>;
}

const codes = new WeakMap<Response, string>();

/** The error code of a JSON error reply the gateway built, for the request log. */
export function errorCodeOf(response: Response): string | undefined {
  return codes.get(response);
}

/** Replies for a gateway of the given version. */
export function createReplies(version: string): Replies {
  const headers = (started: StartedHeaders | undefined, contentType: string, extra?: Record<string, string>) => {
    const out: Record<string, string> = { 'content-type': contentType, [HEADER.serviceVersion]: version };
    if (started) {
      out[HEADER.requestId] = started.requestId;
      out[HEADER.funding] = started.funding;
    }
    if (extra) Object.assign(out, extra);
    return out;
  };
  return {
    plain: (status, text) => new Response(text, { status, headers: { 'content-type': 'text/plain; charset=utf-8', [HEADER.serviceVersion]: version } }),
    error: (error, started) => {
      const gatewayError = typeof error === 'string' ? new GatewayError(error) : error;
      const extra: Record<string, string> = { [HEADER.serviceVersion]: version };
      if (started) {
        extra[HEADER.requestId] = started.requestId;
        extra[HEADER.funding] = started.funding;
      }
      const response = gatewayError.toResponse(extra);
      codes.set(response, gatewayError.code);
      return response;
    },
    json: (body, started, extra, lean) => {
      const out = headers(started, 'application/json', extra);
      return lean ? lean(body, 200, out) : new Response(body, { status: 200, headers: out });
    },
    headers: (started, contentType, extra) => headers(started, contentType, extra),
  };
}
