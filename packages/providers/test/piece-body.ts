/**
 * Test helper of the providers' stream readers: a body over the given pieces (a string is sent as
 * its UTF-8 bytes, an Error errors the body), pulled one piece at a time, recording its pulls and
 * whether it was cancelled.
 */
export function pieceBody(pieces: (string | Error)[]): { body: ReadableStream<Uint8Array>; seen: { pulls: number; cancelled: boolean } } {
  const encoder = new TextEncoder();
  const seen = { pulls: 0, cancelled: false };
  let index = 0;
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        seen.pulls++;
        const piece = pieces[index++];
        if (piece === undefined) return controller.close();
        if (piece instanceof Error) return controller.error(piece);
        controller.enqueue(encoder.encode(piece));
      },
      cancel() {
        seen.cancelled = true;
      },
    },
    { highWaterMark: 0 },
  );
  return { body, seen };
}
