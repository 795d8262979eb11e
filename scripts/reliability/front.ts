/**
 * The run's public address, as a deployment of many instances has one: HAProxy (Debian's
 * `haproxy`) running `deploy/haproxy.cfg` as shipped, only its addresses and ports replaced and
 * Docker's resolvers left out, with a `server` line for each instance of the run. It stands from
 * before the first instance starts to the end of the run, and every instance gets its address as
 * `PUBLIC_BASE_URL`: the stored files' URLs (an UPLOAD's copy, a result's) and the upstream
 * callbacks are built from it, so any instance recognises a file another one stored as the
 * gateway's own. The rolling-restart phase sends its load through it.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { HAPROXY, type HaproxyProcess, loopbackConfig, startHaproxy } from "../../test/support/haproxy.js";
import { type Child, ROOT } from "./processes.js";

export interface RunFront {
  /** Every instance's PUBLIC_BASE_URL. */
  url: string;
  /** The balancer; null when HAProxy is not installed. */
  balancer: HaproxyProcess | null;
}

/**
 * Starts HAProxy on `port` in front of the instances at `ports` (named `gateway-1`...). Without
 * HAProxy the public address is the first instance's own: the instances still agree on it (a
 * file stored by one is the gateway's for all), and the rolling restarts are skipped.
 */
export async function startRunFront(
  port: number,
  ports: number[],
  track: (child: Child) => void,
  tempDirs: string[],
): Promise<RunFront> {
  if (!HAPROXY) return { url: `http://127.0.0.1:${ports[0]}`, balancer: null };
  const dir = mkdtempSync(path.join(os.tmpdir(), "mg-rel-lb-"));
  tempDirs.push(dir);
  const config = loopbackConfig(readFileSync(path.join(ROOT, "deploy/haproxy.cfg"), "utf8"), {
    port,
    servers: Object.fromEntries(ports.map((p, i) => [`gateway-${i + 1}`, p])),
    // The shipped interval: the instances run with the default readiness delay it is made for.
    checkInterval: "1s",
  });
  const balancer = await startHaproxy(config, dir, port);
  track({
    name: "haproxy",
    port,
    url: balancer.url,
    proc: balancer.proc,
    lines: balancer.lines,
    exited: balancer.exited,
  });
  return { url: balancer.url, balancer };
}
