import { chatCostMicros, createCompletionTokenCounter } from '@tollgate/billing';
import type { PreparedChat } from './handle-chat';
import type { ChatModel } from './model-catalogue';

/**
 * What a chat stream has delivered so far costs, as the early-stop rule would charge it if the
 * stream stopped now (the prompt estimate and the delivered text's estimate; the hold caps it);
 * 0 while nothing was delivered. For the crash checkpoints: called once a tick
 * with the stream's delivered text, it reads only the text that is new since the last call.
 *
 * @example
 * const cost = chatDeliveredCost(model, prepared);
 * hold.track(runtime.checkpoints, () => cost(format.delivered));
 */
export function chatDeliveredCost(model: ChatModel, prepared: PreparedChat): (deliveredText: string) => number {
  const counter = createCompletionTokenCounter();
  // Measured now, when the stream starts, not at its first checkpoint: the estimate lets go of the
  // request then, so the stream keeps no prompt text for its life (docs/architecture.md).
  const promptTokens = Math.min(prepared.prompt.tokens(), prepared.promptBound);
  const { price } = model;
  return (deliveredText) => {
    if (deliveredText === '') return 0;
    counter.update(deliveredText);
    try {
      return chatCostMicros(price, { prompt_tokens: promptTokens, completion_tokens: counter.tokens });
    } catch {
      // Past the safe-integer range: the hold caps what is recorded.
      return Number.MAX_SAFE_INTEGER;
    }
  };
}
