/** Test helper (not exported): a TCP proxy whose outage a test switches on and off. */
import { connect, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/** A TCP proxy to `target` that can refuse connections (down) and accept them again (up) on its port. */
export async function tcpProxy(target: { host: string; port: number }) {
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  const up = () =>
    new Promise<void>((resolve) => {
      const listening = createServer((client) => {
        const upstream = connect(target.port, target.host);
        for (const each of [client, upstream]) {
          sockets.add(each);
          each.on('error', () => {});
          each.on('close', () => sockets.delete(each));
        }
        client.pipe(upstream).pipe(client);
      });
      server = listening;
      listening.listen(port, '127.0.0.1', () => {
        port = (listening.address() as AddressInfo).port;
        resolve();
      });
    });
  const down = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      if (server) server.close(() => resolve());
      else resolve();
    });
  await up();
  return { port: () => port, up, down };
}
