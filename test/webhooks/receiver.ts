import http from "node:http";
import type { AddressInfo } from "node:net";

/** One POST a receiver got, with the status it answered. */
export interface Delivery {
  path: string;
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  answered: number;
}

export interface Receiver {
  url: string;
  deliveries: Delivery[];
  close(): Promise<void>;
}

/**
 * A webhook receiver on 127.0.0.1. `statusFor` picks the answer from the path and how many times
 * this webhook-id was seen before (0 on the first attempt); 200 by default.
 */
export async function startReceiver(
  statusFor: (path: string, earlierAttempts: number) => number = () => 200,
): Promise<Receiver> {
  const deliveries: Delivery[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const id = String(req.headers["webhook-id"] ?? "");
      const earlier = deliveries.filter((d) => d.id === id).length;
      const status = statusFor(req.url ?? "/", earlier);
      deliveries.push({
        path: req.url ?? "/",
        id,
        timestamp: String(req.headers["webhook-timestamp"] ?? ""),
        signature: String(req.headers["webhook-signature"] ?? ""),
        body: Buffer.concat(chunks).toString("utf8"),
        answered: status,
      });
      res.writeHead(status, { "content-type": "text/plain" }).end(status === 200 ? "ok" : "not now");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    deliveries,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
