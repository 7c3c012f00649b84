import { utf8ByteLength } from '@tollgate/core';
import type { ChatMessage, ChatRequest } from '@tollgate/core';

/** The text of a message: string content, or its text parts joined without a separator. */
export function messageText(message: ChatMessage): string {
  const content = message.content;
  if (content === null) return '';
  if (typeof content === 'string') return content;
  let text = '';
  for (const part of content) if (part.type === 'text') text += (part as { text: string }).text;
  return text;
}

/**
 * The text of the first system message (role `system`), for the character check; `undefined`
 * when the request has none.
 *
 * @example
 * if (isCharacter(firstSystemText(request) ?? '')) return refuse('characters_app_only');
 */
export function firstSystemText(request: ChatRequest): string | undefined {
  const message = request.messages.find((item) => item.role === 'system');
  return message === undefined ? undefined : messageText(message);
}

/** UTF-8 bytes of the text of the last user message (0 when there is none), for `message_too_long`. */
export function lastUserTextBytes(request: ChatRequest): number {
  for (let i = request.messages.length - 1; i >= 0; i--) {
    const message = request.messages[i] as ChatMessage;
    if (message.role === 'user') return utf8ByteLength(messageText(message));
  }
  return 0;
}
