import { modelRoutes, toModelRecord, type ModelConfig, type ModelType } from '@tollgate/core';
import type { Provider } from '@tollgate/providers';

/** A model with its routes resolved to providers, built once at start. */
export interface CatalogueModel {
  config: ModelConfig;
  routes: { name: string; provider: Provider; upstream: string }[];
}

/** The models by type and id, and the `/v1/models` body serialised once. */
export interface ModelCatalogue {
  find(type: ModelType, id: string): CatalogueModel | undefined;
  /** The JSON body of `GET /v1/models`, the same for every caller. */
  listBody: string;
  /** The first search model: `POST /v1/search` without `model` uses it. */
  defaultSearch: CatalogueModel | undefined;
}

/**
 * Indexes the configured models and checks their routing: every route must name a configured
 * provider that serves the model's type, and a `tee` model's providers must have `attest`.
 * Configuration errors throw at start, never per request.
 */
export function createModelCatalogue(models: ModelConfig[], providers: Record<string, Provider>, created: number): ModelCatalogue {
  const byKey = new Map<string, CatalogueModel>();
  for (const config of models) {
    const key = `${config.type}:${config.id}`;
    if (byKey.has(key)) throw new Error(`model ${config.id}: configured twice`);
    const routes = modelRoutes(config).map((route) => {
      const provider = providers[route.provider];
      if (!provider) throw new Error(`model ${config.id}: provider "${route.provider}" is not configured`);
      const method = config.type === 'chat' ? 'chat' : config.type === 'image' ? 'images' : 'search';
      if (typeof provider[method] !== 'function') throw new Error(`model ${config.id}: provider "${route.provider}" does not serve ${config.type} models`);
      if (config.tier === 'tee' && (!provider.attest || !provider.chatRaw)) {
        throw new Error(`model ${config.id}: tee models need a provider with attest and pass-through (provider "${route.provider}")`);
      }
      return { name: route.provider, provider, upstream: route.upstream };
    });
    if (routes.length === 0) throw new Error(`model ${config.id}: no provider or routes`);
    byKey.set(key, { config, routes });
  }
  const listBody = JSON.stringify({ object: 'list', data: models.map((model) => toModelRecord(model, created)) });
  const firstSearch = models.find((model) => model.type === 'search');
  return {
    find: (type, id) => byKey.get(`${type}:${id}`),
    listBody,
    defaultSearch: firstSearch ? byKey.get(`search:${firstSearch.id}`) : undefined,
  };
}
