import { parseSearchRequest, type SearchRequest } from '@tollgate/validator';
import { admitMetered, type MeteredEndpoint } from './admit-metered';
import { callUpstream } from './call-upstream';
import { failed } from './failed';
import type { SearchModel } from './model-catalogue';
import type { MeteredContext, Runtime } from './runtime';

/** Search's own steps: the default model when none is named, the per-call price. */
function searchEndpoint(runtime: Runtime): MeteredEndpoint<SearchRequest, SearchModel, SearchRequest> {
  return {
    parse: parseSearchRequest,
    model: (request) => (request.model === undefined ? runtime.catalogue.defaultSearch : runtime.catalogue.search(request.model)),
    resolve: (request) => ({ ok: true, value: request }),
    hold: (_, model) => ({ micros: model.microsPerCall, minimum: model.microsPerCall }),
  };
}

/** `POST /v1/search`: one search call at the model's per-call price; results cut to `max_results`. */
export async function handleSearch(runtime: Runtime, context: MeteredContext): Promise<Response> {
  const admitted = await admitMetered(runtime, context, searchEndpoint(runtime));
  if (!admitted.ok) return admitted.error;
  const { model, prepared: request, hold, started } = admitted.value;
  const result = await callUpstream(
    runtime,
    model.routes,
    { zdr: false },
    (provider, upstream, signal) => provider.search({ query: request.query, max_results: request.max_results }, { upstream, signal }),
    { deadlineMs: runtime.wholeCallMs, signal: context.request.signal },
  );
  if (!result.ok) return failed(runtime, context, hold, started, result.error);
  context.log.provider = result.route.name;
  context.log.costMicros = model.microsPerCall;
  await hold.settle(model.microsPerCall, { model: model.id, endpoint: 'search' });
  // A provider may return more than asked: the client gets at most what it asked for.
  const results = result.value.slice(0, request.max_results);
  return runtime.replies.json(JSON.stringify({ object: 'search.results', model: model.id, query: request.query, results }), started);
}
