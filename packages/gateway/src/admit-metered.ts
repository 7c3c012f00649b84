import { GatewayError, type Plan, planAllows, type Refusal, type Result, requestId as newRequestId } from '@tollgate/core';
import { type CreditHold, holdCredits } from './credit-hold';
import { noteHold } from './events';
import type { Principal } from './gateway-options';
import type { StartedHeaders } from './reply';
import type { MeteredContext, Runtime } from './runtime';

/** What admission needs of a model: the lowest plan that may use it, and its id for the log. */
export interface AdmissibleModel {
  /** The model id, for the request log (none for page fetch). */
  readonly id?: string;
  /** The lowest plan that may use it. */
  readonly plan: Plan;
}

/**
 * The message of a hold the key's budget refused: the spec's 402 `insufficient_balance` (the
 * request cannot be paid from what this key may spend; docs/http-api.md says why not a 429),
 * naming the key budget so the client does not top up an account whose balance is not short.
 */
export const KEY_BUDGET_MESSAGE =
  "This API key's budget (its spend limit) does not leave enough for this request; the account's balance is not what is short. An operator can raise the key's budget; a daily or monthly budget starts again at the next UTC day or month.";

function keyBudgetRefusal(): GatewayError {
  return new GatewayError('insufficient_balance', { message: KEY_BUDGET_MESSAGE });
}

/** What a hold must cover: the most the request may cost, and the least that still serves it. */
export interface HoldAmount {
  micros: number;
  minimum: number;
}

/**
 * One metered endpoint's own steps, plugged into {@link admitMetered}. Parse is the schema's first
 * phase; `model` finds the model named (or the endpoint's default); `resolve` runs the checks that
 * need the model (characters, media, settings) and builds what the upstream call takes; `hold` says
 * how much credit that call needs.
 */
export interface MeteredEndpoint<Parsed, Model extends AdmissibleModel, Prepared> {
  /** Reads the endpoint's body; a refusal is answered as the spec's 400. */
  parse(body: Record<string, unknown>): Result<Parsed, Refusal>;
  /** The model the request names, or the endpoint's default; undefined is `model_not_found`. */
  model(parsed: Parsed): Model | undefined;
  /** The endpoint's own checks with the model known, and the request its upstream call takes. */
  resolve(parsed: Parsed, model: Model, principal: Principal): Result<Prepared, Refusal>;
  /** The credit the request must hold. */
  hold(prepared: Prepared, model: Model): HoldAmount;
}

/** A request admitted: its model, its prepared upstream request, its hold, and the started headers. */
export interface Admitted<Model, Prepared> {
  model: Model;
  prepared: Prepared;
  hold: CreditHold;
  /** `X-Request-Id` and `X-Funding`, on every reply from here on. */
  started: StartedHeaders;
}

/** What `context.body` reads once admission parsed it. */
const PARSED: Record<string, unknown> = Object.freeze({});

/**
 * The admission step every metered endpoint shares, after the router took the slot and read the
 * body: parse, model lookup, plan, the endpoint's own checks, the hold, and the request id. The
 * first refusal wins and is answered as the spec's reply (without `X-Request-Id`: nothing started);
 * nothing before the hold consumes credit.
 *
 * @example
 * const admitted = await admitMetered(runtime, context, searchEndpoint(runtime));
 * if (!admitted.ok) return admitted.error;
 * const { model, prepared, hold, started } = admitted.value;
 */
export async function admitMetered<Parsed, Model extends AdmissibleModel, Prepared>(
  runtime: Runtime,
  context: MeteredContext,
  endpoint: MeteredEndpoint<Parsed, Model, Prepared>,
): Promise<Result<Admitted<Model, Prepared>, Response>> {
  const { replies } = runtime;
  const parsed = endpoint.parse(context.body);
  // Read once: the context outlives admission (a stream's closures keep it), its body need not,
  // so an open stream keeps no copy of its prompt through it (docs/architecture.md).
  context.body = PARSED;
  if (!parsed.ok) return { ok: false, error: replies.error(GatewayError.from(parsed.error)) };
  const model = endpoint.model(parsed.value);
  if (!model) return { ok: false, error: replies.error('model_not_found') };
  if (model.id !== undefined) context.log.model = model.id;
  const { principal } = context;
  if (!planAllows(principal.account.plan, model.plan)) return { ok: false, error: replies.error('model_requires_plan') };
  const prepared = endpoint.resolve(parsed.value, model, principal);
  if (!prepared.ok) return { ok: false, error: replies.error(GatewayError.from(prepared.error)) };

  const amount = endpoint.hold(prepared.value, model);
  const requestId = newRequestId();
  const hold = await holdCredits(runtime.store, principal, {
    micros: amount.micros,
    minimum: amount.minimum,
    ttlMs: runtime.holdTtlMs,
    requestId,
    ...(model.id === undefined ? {} : { model: model.id }),
    timers: runtime.timers,
    onSettleError: runtime.options.onSettleError,
  });
  // A key budget's refusal (and the next hold that passes) for `key.budget_reached`; nothing without a hook.
  // A free hold (a zero-priced call) says nothing of the budget's room: it does not end the notice.
  if (!hold.ok || amount.micros > 0) noteHold(runtime, principal, requestId, hold.ok ? undefined : hold.error);
  if (!hold.ok) {
    // Refused before it started: no X-Request-Id on the reply (the spec's rule), but the log line
    // keeps the id a `key.budget_reached` event names.
    if (hold.error.reason === 'key_budget') context.log.requestId = requestId;
    return { ok: false, error: replies.error(hold.error.reason === 'key_budget' ? keyBudgetRefusal() : 'insufficient_balance') };
  }
  context.log.requestId = requestId;
  // Kept alive (renewed) until settled or released, however long the request; released by the
  // router if the handler throws.
  hold.value.track(runtime.checkpoints);
  context.holds.push(hold.value);
  return { ok: true, value: { model, prepared: prepared.value, hold: hold.value, started: { requestId, funding: principal.funding } } };
}
