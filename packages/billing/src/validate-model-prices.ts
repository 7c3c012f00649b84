import type { ModelConfig } from '@tollgate/core';

const CHAT_FIELDS = ['prompt_micros_per_mtok', 'completion_micros_per_mtok', 'min_hold_micros'] as const;
const IMAGE_FIELDS = ['micros_per_image', 'micros_per_reference'] as const;

/**
 * Checks every model's prices at startup, so a missing or malformed price is an error and never
 * a free model by accident. Chat and image models need a `price` with all their fields as
 * non-negative safe integers; `micros_per_call` (search) and `image_token_bound`, when set, must be
 * non-negative safe integers too. A chat price's `cached_prompt_micros_per_mtok`, when set, must be
 * one as well and at most the prompt price: the hold counts every prompt token at the prompt
 * price, so it stays the most a request can cost. Throws an Error naming the model id and the field.
 *
 * @example
 * validateModelPrices(config.models); // at startup, before serving
 */
export function validateModelPrices(models: ModelConfig[]): void {
  for (const model of models) {
    if (model.type === 'chat') {
      checkPrice(model.id, model.type, model.price, CHAT_FIELDS);
      checkCachedPrice(model.id, model.price);
      if (model.image_token_bound !== undefined) check(model.id, 'image_token_bound', model.image_token_bound);
    } else if (model.type === 'image') checkPrice(model.id, model.type, model.price, IMAGE_FIELDS);
    else if (model.micros_per_call !== undefined) check(model.id, 'micros_per_call', model.micros_per_call);
  }
}

/** A configuration read from JSON may carry anything where the type says a price: each field is checked. */
function checkPrice(id: string, type: string, price: unknown, fields: readonly string[]): void {
  if (price === undefined || price === null || typeof price !== 'object') {
    throw new Error(`model "${id}": price is missing (a ${type} model needs ${fields.join(', ')})`);
  }
  for (const field of fields) check(id, `price.${field}`, Reflect.get(price, field));
}

/** The cached-prompt price is optional; when set it may not exceed the prompt price. */
function checkCachedPrice(id: string, price: unknown): void {
  const cached: unknown = Reflect.get(Object(price), 'cached_prompt_micros_per_mtok');
  if (cached === undefined) return;
  check(id, 'price.cached_prompt_micros_per_mtok', cached);
  const prompt: unknown = Reflect.get(Object(price), 'prompt_micros_per_mtok');
  if (typeof cached === 'number' && typeof prompt === 'number' && cached > prompt) {
    throw new Error(`model "${id}": price.cached_prompt_micros_per_mtok (${cached}) must not exceed price.prompt_micros_per_mtok (${prompt})`);
  }
}

function check(id: string, field: string, value: unknown): void {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new Error(`model "${id}": ${field} must be a non-negative safe integer, got ${JSON.stringify(value) ?? 'undefined'}`);
  }
}
