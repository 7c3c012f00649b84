import type { Plan } from './plans';

/** Model kinds of the model list. */
export type ModelType = 'chat' | 'image' | 'search';

/** Chat prices in micro-dollars. */
export interface ChatPrice {
  /** Micro-dollars per million prompt tokens. */
  prompt_micros_per_mtok: number;
  /**
   * Micro-dollars per million prompt tokens the provider read from its cache (a subset of the
   * prompt tokens); at most `prompt_micros_per_mtok`. Absent: cached tokens cost the prompt price.
   */
  cached_prompt_micros_per_mtok?: number;
  /** Micro-dollars per million completion tokens. */
  completion_micros_per_mtok: number;
  /** The least a request holds, whatever its size. */
  min_hold_micros: number;
}

/** Image prices in micro-dollars. */
export interface ImagePrice {
  /** Micro-dollars per generated image. */
  micros_per_image: number;
  /** Micro-dollars added to every image for each reference image. */
  micros_per_reference: number;
}

/** The public model record of `GET /v1/models`: only the spec's fields. */
export interface ModelRecord {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
  tier: string;
  type: ModelType;
  label: string;
  plan: Plan;
  retention?: string;
  input_modalities?: string[];
  context_tokens?: number;
  max_output_tokens?: number;
  compact_at_tokens?: number;
  price?: ChatPrice | ImagePrice;
  included?: { from: Plan; quota: string };
}

/** One upstream route of a model: a provider (a key of the gateway's `providers`) and its model name. */
export interface ModelRoute {
  /** The key of the provider in the gateway's `providers`. */
  provider: string;
  /** The provider's own model name; defaults to the model id. */
  upstream?: string;
}

/** What every configured model has: its id, record defaults, and routing (never in `/v1/models`). */
export interface ModelConfigBase {
  /** Model id used in the `model` field of requests. */
  id: string;
  /** When the record was created, unix seconds; defaults to the gateway's start. */
  created?: number;
  /** The model's maker; defaults to the provider key. */
  owned_by?: string;
  /** Privacy tier: `anon`, `private`, `tee`; defaults to `anon`. */
  tier?: string;
  /** Display name; defaults to the id. */
  label?: string;
  /** Lowest plan that may use the model; defaults to `free`. */
  plan?: Plan;
  /** The first route's provider. */
  provider?: string;
  /** The first route's upstream model name. */
  upstream?: string;
  /** Failover routes, tried in order (after `provider`/`upstream` when those are set). */
  routes?: ModelRoute[];
}

/** A configured chat model. `price` is required: a chat model without one is refused at start. */
export interface ChatModelConfig extends ModelConfigBase {
  type: 'chat';
  /** Chat prices; checked when the gateway is created. */
  price?: ChatPrice;
  /** Retention: `zdr` sends the prompt only to routes whose provider confirms zero data retention. */
  retention?: string;
  /** What the model reads: `text`, `image`, `file`, `video`, `audio`. */
  input_modalities?: string[];
  /** The model's context window, in tokens (caps the prompt bound of the hold). */
  context_tokens?: number;
  /** The most output tokens a request may ask for. */
  max_output_tokens?: number;
  /** Informational, shown in the model list. */
  compact_at_tokens?: number;
  /** Output tokens when the request sets no limit; defaults to `max_output_tokens`. */
  default_output_tokens?: number;
  /** Prompt-token bound per inline image in the hold estimate; default 2,048. */
  image_token_bound?: number;
  /** Part types beyond text the model reads (`image_url`, `file`, `video_url`, `audio_url`, `file_url`). Defaults from `input_modalities`. */
  part_types?: string[];
}

/** A configured image model. `price` is required: an image model without one is refused at start. */
export interface ImageModelConfig extends ModelConfigBase {
  type: 'image';
  /** Image prices; checked when the gateway is created. */
  price?: ImagePrice;
  /** Most reference images taken (default 0). */
  max_reference_images?: number;
  /** Resolutions taken (default `["1k"]`). */
  resolutions?: string[];
  /** Quality values taken; absent means the model has no quality setting. */
  qualities?: string[];
}

/** A configured search model. */
export interface SearchModelConfig extends ModelConfigBase {
  type: 'search';
  /** Plan-included use, shown in the model list (keys always pay credits). */
  included?: { from: Plan; quota: string };
  /** Micro-dollars per call (default 0). */
  micros_per_call?: number;
}

/**
 * A configured model: the public record's fields plus routing and settings that never appear in
 * `/v1/models`, one shape per `type`.
 */
export type ModelConfig = ChatModelConfig | ImageModelConfig | SearchModelConfig;

/** The public fields of a model record, in the spec's order. */
export const MODEL_RECORD_FIELDS = [
  'id',
  'object',
  'created',
  'owned_by',
  'tier',
  'type',
  'label',
  'plan',
  'retention',
  'input_modalities',
  'context_tokens',
  'max_output_tokens',
  'compact_at_tokens',
  'price',
  'included',
] as const;

/** The public record of a configured model: routing and settings left out. */
export function toModelRecord(model: ModelConfig, created: number): ModelRecord {
  const record: ModelRecord = {
    id: model.id,
    object: 'model',
    created: model.created ?? created,
    owned_by: model.owned_by ?? model.provider ?? model.routes?.[0]?.provider ?? 'tollgate',
    tier: model.tier ?? 'anon',
    type: model.type,
    label: model.label ?? model.id,
    plan: model.plan ?? 'free',
  };
  if (model.type === 'chat') {
    if (model.retention !== undefined) record.retention = model.retention;
    if (model.input_modalities !== undefined) record.input_modalities = model.input_modalities;
    if (model.context_tokens !== undefined) record.context_tokens = model.context_tokens;
    if (model.max_output_tokens !== undefined) record.max_output_tokens = model.max_output_tokens;
    if (model.compact_at_tokens !== undefined) record.compact_at_tokens = model.compact_at_tokens;
  }
  if (model.type !== 'search' && model.price !== undefined) record.price = model.price;
  if (model.type === 'search' && model.included !== undefined) record.included = model.included;
  return record;
}

/** The routes of a model, in order: `provider`/`upstream` first, then `routes`. */
export function modelRoutes(model: ModelConfig): Required<ModelRoute>[] {
  const routes: Required<ModelRoute>[] = [];
  if (model.provider !== undefined) routes.push({ provider: model.provider, upstream: model.upstream ?? model.id });
  for (const route of model.routes ?? []) routes.push({ provider: route.provider, upstream: route.upstream ?? model.id });
  return routes;
}
