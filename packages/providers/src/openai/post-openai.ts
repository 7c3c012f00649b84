import { linkAbort } from '../http/link-abort';
import { postJson, type JsonTarget } from '../http/post-json';
import { mapOpenAIError } from './map-openai-error';

/** An upstream call in progress: its response (status 2xx) and the controller that aborts it. */
export interface UpstreamCall {
  response: Response;
  /** Aborts the upstream request (and its body) when it runs under a controller of our own; callers cancel the body too. */
  abort(): void;
  /** Called once the call is over (see {@link linkAbort}). */
  unlink(): void;
}

/**
 * POSTs JSON to the upstream. Resolves with a 2xx response; throws a mapped ProviderError on
 * refusal or connection failure, or the caller's abort reason when the caller gave up. The call
 * runs under the caller's signal, or a controller of our own when there is none ({@link linkAbort}):
 * cancelling a returned stream must abort the fetch even when the caller passed no signal.
 */
export async function postOpenAI(target: JsonTarget, body: unknown, signal: AbortSignal | undefined): Promise<UpstreamCall> {
  const link = linkAbort(signal);
  try {
    const response = await postJson(target, body, link.signal, mapOpenAIError);
    return { response, abort: link.abort, unlink: link.unlink };
  } catch (error) {
    link.unlink();
    throw error;
  }
}
