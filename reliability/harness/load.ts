/**
 * A steady load of short chat requests on one or more servers, recording when each started and
 * ended, for the scenarios that break a dependency (Redis, PostgreSQL) mid-load.
 */
import { chatBody, send, type Reply } from './client';

/** One request of the load. */
export interface Sample {
  server: number;
  startedAt: number;
  endedAt: number;
  reply: Reply;
}

/** A running load; `stop()` waits for the requests in flight and returns every sample. */
export interface Load {
  samples: Sample[];
  stop(): Promise<Sample[]>;
}

/** `perServer` loops per server, each sending one request after another (each bounded at 15 s). */
export function startLoad(urls: string[], keys: string[], perServer = 2): Load {
  const samples: Sample[] = [];
  let running = true;
  let turn = 0;
  const loops = urls.flatMap((url, server) =>
    Array.from({ length: perServer }, async () => {
      while (running) {
        const startedAt = performance.now();
        const reply = await send(url, keys[turn++ % keys.length] ?? '', chatBody('chat', { maxTokens: 20 }), { signal: AbortSignal.timeout(15_000) });
        samples.push({ server, startedAt, endedAt: performance.now(), reply });
        // A refused request comes back at once: pace the loop so a failure is not a busy loop.
        if (reply.status !== 200) await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }),
  );
  return {
    samples,
    async stop() {
      running = false;
      await Promise.all(loops);
      return samples;
    },
  };
}

/** The samples that started after `from` and ended before `to` (performance.now() times). */
export function within(samples: Sample[], from: number, to: number, server?: number): Sample[] {
  return samples.filter((sample) => sample.startedAt >= from && sample.endedAt <= to && (server === undefined || sample.server === server));
}
