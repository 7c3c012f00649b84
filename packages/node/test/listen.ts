import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Test helper: starts `server` on a free loopback port and registers its shutdown (every connection
 * closed, then the server) in `cleanups`, for the test file's `afterEach` to run. Returns the port.
 */
export async function listenOnLoopback(server: Server, cleanups: (() => unknown)[]): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(resolve);
      }),
  );
  return (server.address() as AddressInfo).port;
}
