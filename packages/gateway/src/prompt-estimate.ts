import type { ChatModelConfig, ChatRequest } from '@tollgate/core';
import { estimatePromptTokens } from '@tollgate/billing';

/**
 * A chat request's prompt-token estimate (`estimatePromptTokens` of @tollgate/billing), measured the
 * first time it is asked for, when the request is let go: what prices a stream's delivery (its
 * crash checkpoints), its usage chunk without reported usage, and its charge without reported usage
 * all share one. A stream asks for it when it starts (chat-delivered-cost.ts), so an open stream
 * keeps no prompt text for its life (docs/architecture.md, "What an open stream keeps"). A class,
 * not an object literal with closures: nothing here keeps its maker's scope.
 *
 * @example
 * const prompt = new PromptEstimate(request, model.config);
 * const tokens = prompt.tokens(); // measured now; the request is no longer referenced
 */
export class PromptEstimate {
  #request: ChatRequest | undefined;
  #tokens = 0;
  readonly #config: ChatModelConfig;

  constructor(request: ChatRequest, config: ChatModelConfig) {
    this.#request = request;
    this.#config = config;
  }

  /** The estimate: measured on the first call, the same number on every later one. */
  tokens(): number {
    const request = this.#request;
    if (request !== undefined) {
      this.#tokens = estimatePromptTokens(request, this.#config);
      this.#request = undefined;
    }
    return this.#tokens;
  }
}
