import type { JsonTarget } from '../http/post-json';
import { abortReason } from '../http/post-json';
import { type CallOptions, ProviderError } from '../provider';
import { openaiResponsesStream, type ResponsesWireEvent } from './openai-responses-stream';
import { postOpenAI } from './post-openai';
import { readJsonReply } from '../http/read-json-reply';

/** A Responses API request as it goes upstream: the client's checked body, the upstream's model name set. */
export type UpstreamResponsesRequest = Record<string, unknown>;

/** The native Responses calls of an upstream that speaks the API (`openaiCompatible({ responsesApi: true })`). */
export interface ResponsesPassThrough {
  /** A whole response object, as the upstream sent it (checked to be an object with an `output` list). */
  responses(request: UpstreamResponsesRequest, options: CallOptions): Promise<Record<string, unknown>>;
  /** The upstream's events, each parsed once, ending with its terminal event; resolves once it answered 200. */
  responsesStream(request: UpstreamResponsesRequest, options: CallOptions): Promise<ReadableStream<ResponsesWireEvent>>;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * `POST {baseURL}/responses` of an OpenAI-compatible upstream, whole and streamed, with the chat
 * adapter's error mapping. The body is the client's, already checked by the gateway
 * (`packages/validator/src/responses-schema.ts`); `model` is the upstream's name and `store` is
 * always false, so the upstream keeps nothing either.
 *
 * @example
 * const native = openaiResponses({ url: `${baseURL}/responses`, headers, fetch });
 * const response = await native.responses({ model: 'gpt-4.1', input: 'Hi' }, { upstream: 'gpt-4.1' });
 */
export function openaiResponses(target: JsonTarget): ResponsesPassThrough {
  const streamTarget: JsonTarget = { ...target, headers: { ...target.headers, accept: 'text/event-stream' } };
  const body = (request: UpstreamResponsesRequest, upstream: string, stream: boolean) => ({ ...request, model: upstream, store: false, stream });
  return {
    async responses(request, options) {
      const call = await postOpenAI(target, body(request, options.upstream, false), options.signal);
      let json: unknown;
      try {
        json = await readJsonReply(call.response);
      } catch {
        if (options.signal?.aborted) throw abortReason(options.signal);
        throw new ProviderError('upstream_error', { accepted: true, status: call.response.status });
      } finally {
        call.unlink();
      }
      if (!isObject(json) || !Array.isArray(json.output)) throw new ProviderError('upstream_error', { accepted: true, status: call.response.status });
      return json;
    },
    async responsesStream(request, options) {
      const call = await postOpenAI(streamTarget, body(request, options.upstream, true), options.signal);
      try {
        return openaiResponsesStream(call, options.signal);
      } catch (error) {
        call.unlink();
        throw error;
      }
    },
  };
}
