import { GatewayError, planAllows, requestId as newRequestId, type ImagePrice } from '@tollgate/core';
import { imageCostMicros } from '@tollgate/billing';
import { parseImageRequest, resolveImageRequest, sniffBase64ImageType } from '@tollgate/validator';
import type { ProviderImageRequest } from '@tollgate/providers';
import { callRoutes } from './call-routes';
import { holdCredits } from './credit-hold';
import { failed } from './failed';
import type { MeteredContext, Runtime } from './runtime';

/**
 * `POST /v1/images/generations`: hold n images, pay only delivered ones, nothing when the client
 * left before the images returned.
 */
export async function handleImages(runtime: Runtime, context: MeteredContext): Promise<Response> {
  const { replies } = runtime;
  const parsed = parseImageRequest(context.body);
  if (!parsed.ok) return replies.error(GatewayError.from(parsed.error));
  const model = runtime.catalogue.find('image', parsed.value.model);
  if (!model) return replies.error('model_not_found');
  const config = model.config;
  context.log.model = config.id;
  if (!planAllows(context.principal.account.plan, config.plan ?? 'free')) return replies.error('model_requires_plan');
  const resolved = resolveImageRequest(parsed.value, config);
  if (!resolved.ok) return replies.error(GatewayError.from(resolved.error));
  const request: ProviderImageRequest = resolved.value;

  const perImage = imageCostMicros(config.price as ImagePrice, request.reference_images.length);
  const requestId = newRequestId();
  const held = await holdCredits(runtime.store, context.principal, {
    micros: perImage * request.n,
    minimum: perImage * request.n,
    ttlMs: runtime.holdTtlMs,
    onSettleError: runtime.options.onSettleError,
    timers: runtime.timers,
    requestId,
  });
  if (!held.ok) return replies.error(GatewayError.from(held.error));
  const hold = held.value;
  const started = { requestId, funding: context.principal.funding };
  context.log.requestId = requestId;

  const signal = context.request.signal;
  const result = await callRoutes(model, runtime.attestations, (provider, upstream) => provider.images!(request, { upstream, signal }));
  if (signal.aborted) {
    // The client left before the images returned: nothing is charged, whatever the upstream did.
    context.log.outcome = 'client_gone';
    return failed(runtime, context, hold, started, new GatewayError('upstream_error'));
  }
  if (!result.ok) return failed(runtime, context, hold, started, result.error);
  context.log.provider = result.route.name;
  // The media type comes from the bytes, never from the upstream's label; bytes that are no known
  // image are not an image delivered (and not paid for).
  const data = result.value.slice(0, request.n).flatMap((image) => {
    const mime = sniffBase64ImageType(image.b64_json);
    return mime === undefined ? [] : [{ b64_json: image.b64_json, mime_type: mime }];
  });
  if (data.length === 0) return failed(runtime, context, hold, started, new GatewayError('upstream_error'));
  const cost = perImage * data.length;
  context.log.costMicros = cost;
  await hold.settle(cost, { model: config.id, images: data.length, references: request.reference_images.length });
  return replies.json(JSON.stringify({ created: Math.floor(runtime.now() / 1000), data }), started);
}
