import { GatewayError } from '@tollgate/core';
import { imageCostMicros } from '@tollgate/billing';
import { type ParsedImageRequest, parseImageRequest, type ResolvedImageRequest, resolveImageRequest, sniffBase64ImageType } from '@tollgate/validator';
import { admitMetered, type MeteredEndpoint } from './admit-metered';
import { callUpstream } from './call-upstream';
import { failed } from './failed';
import type { ImageModel } from './model-catalogue';
import type { MeteredContext, Runtime } from './runtime';

/** Images' own steps: the model's settings and references checked, n images held. */
function imagesEndpoint(runtime: Runtime): MeteredEndpoint<ParsedImageRequest, ImageModel, ResolvedImageRequest> {
  return {
    parse: parseImageRequest,
    model: (parsed) => runtime.catalogue.image(parsed.model),
    resolve: (parsed, model) => resolveImageRequest(parsed, model.config),
    hold: (request, model) => {
      const all = imageCostMicros(model.price, request.reference_images.length) * request.n;
      return { micros: all, minimum: all };
    },
  };
}

/**
 * `POST /v1/images/generations`: hold n images, pay only delivered ones, nothing when the client
 * left before the images returned.
 */
export async function handleImages(runtime: Runtime, context: MeteredContext): Promise<Response> {
  const admitted = await admitMetered(runtime, context, imagesEndpoint(runtime));
  if (!admitted.ok) return admitted.error;
  const { model, prepared: request, hold, started } = admitted.value;
  const { signal } = context.request;
  const result = await callUpstream(
    runtime,
    model.routes,
    { zdr: false },
    (provider, upstream, abort) => provider.images(request, { upstream, signal: abort }),
    {
      deadlineMs: runtime.wholeCallMs,
      signal,
    },
  );
  if (signal.aborted) {
    // The client left before the images returned: nothing is charged, whatever the upstream did.
    context.log.outcome = 'client_gone';
    return failed(runtime, context, hold, started, new GatewayError('upstream_error'));
  }
  if (!result.ok) return failed(runtime, context, hold, started, result.error);
  context.log.provider = result.route.name;
  // A provider may return more than n: extra images are neither delivered nor charged. The media
  // type comes from the bytes, never from the upstream's label; bytes that are no known image are
  // not an image delivered (and not paid for).
  const data = result.value
    .flatMap((image) => {
      const mime = sniffBase64ImageType(image.b64_json);
      return mime === undefined ? [] : [{ b64_json: image.b64_json, mime_type: mime }];
    })
    .slice(0, request.n);
  if (data.length === 0) return failed(runtime, context, hold, started, new GatewayError('upstream_error'));
  const cost = imageCostMicros(model.price, request.reference_images.length) * data.length;
  context.log.costMicros = cost;
  await hold.settle(cost, { model: model.id, images: data.length, references: request.reference_images.length });
  return runtime.replies.json(JSON.stringify({ created: Math.floor(runtime.now() / 1000), data }), started);
}
