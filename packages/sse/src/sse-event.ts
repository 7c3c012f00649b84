/** One decoded server-sent event. */
export interface SseEvent {
  /** The data lines of the event, joined with `\n`. */
  data: string;
  /** The `event:` field, when the event set one. */
  event?: string;
  /** The `id:` field, when the event set one (not carried over to later events). */
  id?: string;
}
