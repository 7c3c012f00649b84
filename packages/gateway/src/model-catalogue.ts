import {
  type ChatModelConfig,
  type ChatPrice,
  type ImageModelConfig,
  type ImagePrice,
  type ModelConfig,
  modelRoutes,
  type Plan,
  type SearchModelConfig,
  toModelRecord,
} from '@tollgate/core';
import type { ChatProvider, ImageProvider, PassThroughChatProvider, Provider, ProviderBase, SearchProvider } from '@tollgate/providers';

/** One route of a model: the provider's key (for logs), the provider, and its model name. */
export interface Route<P extends ProviderBase> {
  name: string;
  provider: P;
  upstream: string;
}

/** A pass-through chat provider whose attested endpoint can be verified: what a `tee` route needs. */
export type AttestedProvider = PassThroughChatProvider & { readonly attest: () => Promise<void> };

/** What every catalogue entry has: its configuration, id and plan resolved, its routes typed by kind. */
interface CatalogueEntry<C extends ModelConfig, P extends ProviderBase> {
  config: C;
  id: string;
  plan: Plan;
  routes: Route<P>[];
  /** The model's `retention` is `zdr`: only routes whose provider confirms zero retention are used. */
  zdr: boolean;
}

/** A chat model with its price checked; a `tee` model also has its routes as attested pass-through ones. */
export interface ChatModel extends CatalogueEntry<ChatModelConfig, ChatProvider> {
  price: ChatPrice;
  /** Set for `tee` models only. */
  tee: Route<AttestedProvider>[] | undefined;
}

/** An image model with its price checked. */
export interface ImageModel extends CatalogueEntry<ImageModelConfig, ImageProvider> {
  price: ImagePrice;
}

/** A search model with its per-call price. */
export interface SearchModel extends CatalogueEntry<SearchModelConfig, SearchProvider> {
  microsPerCall: number;
}

/** The models by kind and id, and the `/v1/models` body serialised once. */
export interface ModelCatalogue {
  chat(id: string): ChatModel | undefined;
  image(id: string): ImageModel | undefined;
  search(id: string): SearchModel | undefined;
  /** The first search model: `POST /v1/search` without `model` uses it. */
  defaultSearch: SearchModel | undefined;
  /** The JSON body of `GET /v1/models`, the same for every caller. */
  listBody: string;
}

/**
 * Indexes the configured models and checks their routing: every route must name a configured
 * provider of the model's kind (chat, image, search), a `tee` model's providers must pass replies
 * through and have `attest`, and chat and image models must have a price. Configuration errors
 * throw here, at start, never per request.
 */
export function createModelCatalogue(models: ModelConfig[], providers: Record<string, Provider>, created: number): ModelCatalogue {
  const chats = new Map<string, ChatModel>();
  const images = new Map<string, ImageModel>();
  const searches = new Map<string, SearchModel>();
  let defaultSearch: SearchModel | undefined;
  const claim = <T>(map: Map<string, T>, id: string, entry: T) => {
    if (map.has(id)) throw new Error(`model ${id}: configured twice`);
    map.set(id, entry);
  };
  for (const config of models) {
    const base = { id: config.id, plan: config.plan ?? 'free', zdr: config.type === 'chat' && config.retention === 'zdr' };
    if (config.type === 'chat') {
      const price = required(config, config.price);
      const routes = routesOf(config, providers, servesChat, (name) => `provider "${name}" does not serve chat models`);
      const tee =
        config.tier === 'tee'
          ? routesOf(config, providers, servesAttestedPassThrough, (name) => `tee models need a provider with attest and pass-through (provider "${name}")`)
          : undefined;
      claim(chats, config.id, { ...base, config, price, routes, tee });
    } else if (config.type === 'image') {
      claim(images, config.id, {
        ...base,
        config,
        price: required(config, config.price),
        routes: routesOf(config, providers, servesImages, (name) => `provider "${name}" does not serve image models`),
      });
    } else {
      const entry: SearchModel = {
        ...base,
        config,
        microsPerCall: config.micros_per_call ?? 0,
        routes: routesOf(config, providers, servesSearch, (name) => `provider "${name}" does not serve search models`),
      };
      claim(searches, config.id, entry);
      defaultSearch ??= entry;
    }
  }
  return {
    chat: (id) => chats.get(id),
    image: (id) => images.get(id),
    search: (id) => searches.get(id),
    defaultSearch,
    listBody: JSON.stringify({ object: 'list', data: models.map((model) => toModelRecord(model, created)) }),
  };
}

/** The model's routes, each naming a configured provider that `serves` the model's kind (else `refusal`). */
function routesOf<P extends ProviderBase>(
  config: ModelConfig,
  providers: Record<string, Provider>,
  serves: (provider: Provider) => provider is P & Provider,
  refusal: (name: string) => string,
): Route<P>[] {
  const routes = modelRoutes(config).map((route) => {
    const provider = Object.hasOwn(providers, route.provider) ? providers[route.provider] : undefined;
    if (!provider) throw new Error(`model ${config.id}: provider "${route.provider}" is not configured`);
    if (!serves(provider)) throw new Error(`model ${config.id}: ${refusal(route.provider)}`);
    return { name: route.provider, provider, upstream: route.upstream };
  });
  if (routes.length === 0) throw new Error(`model ${config.id}: no provider or routes`);
  return routes;
}

/** The price a chat or image model must have (validateModelPrices checked its fields first). */
function required<T>(config: ModelConfig, price: T | undefined): T {
  if (price === undefined) throw new Error(`model "${config.id}": price is missing`);
  return price;
}

function servesChat(provider: Provider): provider is ChatProvider {
  return 'chat' in provider && typeof provider.chat === 'function' && typeof provider.chatStream === 'function';
}

function servesAttestedPassThrough(provider: Provider): provider is AttestedProvider {
  return servesChat(provider) && 'chatRaw' in provider && typeof provider.chatRaw === 'function' && typeof provider.attest === 'function';
}

function servesImages(provider: Provider): provider is ImageProvider {
  return 'images' in provider && typeof provider.images === 'function';
}

function servesSearch(provider: Provider): provider is SearchProvider {
  return 'search' in provider && typeof provider.search === 'function';
}
