import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { callGateway } from "../../test/reliability/harness.js";
import type { Kill } from "./money-checks.js";
import { type Child, gatewayReady, killChild, startChild, waitReady } from "./processes.js";

/** Settings of the run's gateways that the money checks derive their bounds from. */
export const CHARGE_OPEN_MS = 15_000;
/** The reaper's interval; `RELIABILITY_CHARGE_REAP_INTERVAL_MS` changes it (to show the check fire). */
export const CHARGE_REAP_INTERVAL_MS = Number(process.env.RELIABILITY_CHARGE_REAP_INTERVAL_MS || 1000);
export const TASK_LEASE_MS = 3000;
export const TASK_UNSENT_GRACE_MS = 5000;
export const IDEMPOTENCY_LEASE_MS = 4000;

/**
 * Three gateway instances on one PostgreSQL, one Redis and one S3 bucket (the env's `BLOB_URL`):
 * a file one instance stored (an upload, a video copied to storage) is served by any, as in a
 * deployment of many instances, and one public address (the env's `PUBLIC_BASE_URL`, the run's
 * balancer) from which every instance builds the URLs it hands out. Each keeps its port, data
 * folder and instance name across restarts, as a supervisor restarting a crashed process would,
 * so that a restarted instance recognises the charges its earlier run left open. With
 * `RELIABILITY_FRESH_INSTANCE_NAMES=1` a restarted instance gets a new name instead (it then does
 * not recognise them, and only the reaper closes them).
 */
export class Cluster {
  readonly gateways: Child[] = [];
  readonly live = new Set<number>();
  readonly kills: Kill[] = [];
  private readonly dirs: string[] = [];
  private readonly names: string[] = [];
  private restarts = 0;

  constructor(
    private readonly ports: number[],
    private readonly env: Record<string, string>,
    private readonly track: (child: Child) => void,
    private readonly tempDirs: string[],
  ) {}

  /** Starts instance `i` (0-based); the first start of each makes its data folder. */
  async start(i: number, name = `gateway-${i + 1}`): Promise<Child> {
    if (!this.dirs[i]) {
      this.dirs[i] = mkdtempSync(path.join(os.tmpdir(), `mg-rel-${i + 1}-`));
      this.tempDirs.push(this.dirs[i] as string);
    }
    const port = this.ports[i] as number;
    const child = startChild(`gateway-${i + 1}`, port, ["serve", "--port", String(port)], {
      ...this.env,
      DATA_DIR: this.dirs[i] as string,
      INSTANCE_NAME: name,
    });
    this.track(child);
    await waitReady(child, () => gatewayReady(child.url));
    this.gateways[i] = child;
    this.names[i] = name;
    this.live.add(i);
    return child;
  }

  /** A live instance, chosen by `n` in turn. */
  pick(n: number): { index: number; child: Child } {
    const candidates = [...this.live];
    const index = candidates[n % candidates.length] as number;
    return { index, child: this.gateways[index] as Child };
  }

  /** SIGKILL instance `i` by its pid, wait `downMs`, start it again; returns the kill as recorded. */
  async killAndRestart(i: number, downMs: number, log: (line: string) => void): Promise<Kill> {
    const victim = this.gateways[i] as Child;
    const instance = this.instanceName(i);
    this.live.delete(i);
    const killedAt = Date.now();
    await killChild(victim);
    log(`SIGKILL ${victim.name} (pid ${victim.proc.pid})`);
    await new Promise((resolve) => setTimeout(resolve, downMs));
    this.restarts += 1;
    const fresh = process.env.RELIABILITY_FRESH_INSTANCE_NAMES === "1";
    const child = await this.start(i, fresh ? `gateway-${i + 1}-r${this.restarts}` : `gateway-${i + 1}`);
    const kill = { instance, killedAt, restartedAt: Date.now() };
    this.kills.push(kill);
    log(`restarted ${child.name} (pid ${child.proc.pid}) ${kill.restartedAt - killedAt} ms after the kill`);
    return kill;
  }

  /**
   * Stops instance `i` as an orchestrator does: SIGTERM by its pid (it fails /readyz, drains and
   * exits). Resolves with its exit code.
   */
  async stopGracefully(i: number): Promise<number | null> {
    const victim = this.gateways[i] as Child;
    this.live.delete(i);
    victim.proc.kill("SIGTERM");
    return victim.exited;
  }

  /** Starts instance `i` again under the name it had; resolves once it answers /readyz. */
  async startAgain(i: number): Promise<Child> {
    return this.start(i, this.instanceName(i));
  }

  /**
   * The live instance holding a task lease as `owner`, or null. A worker's lease owner is
   * `<pid>-<random>`: the pid names the process.
   */
  indexOfLeaseOwner(owner: string): number | null {
    const pid = owner.split("-")[0];
    const i = [...this.live].find((n) => String(this.gateways[n]?.proc.pid) === pid);
    return i ?? null;
  }

  private instanceName(i: number): string {
    return this.names[i] as string;
  }
}

/** Calls the admin API; throws on anything but 200. */
export async function adminCall(base: string, adminKey: string, method: string, urlPath: string, body?: unknown) {
  const res = await callGateway(base, method, `/api/admin${urlPath}`, {
    headers: { authorization: `Bearer ${adminKey}` },
    body,
  });
  if (res.status !== 200) throw new Error(`${method} ${urlPath}: ${res.status} ${res.text}`);
  return res.body.data;
}
