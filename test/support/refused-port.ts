import { readFileSync } from "node:fs";
import net from "node:net";

/**
 * A TCP port on 127.0.0.1 that nothing listens on, so that a connection to it is refused.
 *
 * It is taken below the range the system hands out for port 0 (`ip_local_port_range`), where no
 * test server asks for one. A port of that range that was free a moment ago can be given at once
 * to a server of another test file running in parallel, which then answers instead of refusing.
 */
export async function refusedPort(): Promise<number> {
  const low = ephemeralLow();
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * (low - 20_000));
    if (await free(port)) return port;
  }
  throw new Error("no free port found below the range of ports the system hands out");
}

/** The first port the system hands out for port 0 (32768 where it cannot be read). */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
    if (Number.isInteger(low) && low > 21_000) return low;
  } catch {
    // Not Linux: the common default below.
  }
  return 32_768;
}

function free(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}
