import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** What a local upstream saw of one request. */
export interface SeenRequest {
  method: string;
  url: string;
  body: string;
  type?: string;
  key?: string;
}

/** A local HTTP server on 127.0.0.1 (a free port) standing for an upstream. */
export interface LocalUpstream {
  server: Server;
  /** `http://127.0.0.1:<port>` */
  base: string;
  /** Closes it, its open connections included. */
  close(): Promise<void>;
}

export async function listenLocal(handler: RequestListener): Promise<LocalUpstream> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    server,
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close() {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A handler that reads each request's body, records the request in `seen` (its content type and
 * Gemini key only when sent), then hands it to `answer`.
 */
export function recording(
  seen: SeenRequest[],
  answer: (req: IncomingMessage, res: ServerResponse) => void,
): RequestListener {
  return (req, res) => {
    let body = "";
    req.on("data", (chunk) => {
      body += chunk;
    });
    req.on("end", () => {
      const type = req.headers["content-type"];
      const key = req.headers["x-goog-api-key"] as string | undefined;
      seen.push({
        method: req.method ?? "",
        url: req.url ?? "",
        body,
        ...(type ? { type } : {}),
        ...(key ? { key } : {}),
      });
      answer(req, res);
    });
  };
}
