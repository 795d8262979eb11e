import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAdminCommand } from "../../src/cli/admin.js";
import { type Simulator, startSimulator } from "../../src/simulator/server.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { clientOf, FAST_VIDEOS, ledgerRowsOf, untilEnded } from "./harness.js";

/** The admin command line in this process, on the gateway's data folder. */
async function cli(dir: string, args: string[]) {
  let stdout = "";
  let stderr = "";
  const code = await runAdminCommand([...args, "--json"], {
    stdout: { write: (t: string) => (stdout += t) },
    stderr: { write: (t: string) => (stderr += t) },
    env: {
      ...process.env,
      DATABASE_URL: `sqlite:${path.join(dir, "gateway.sqlite")}`,
      DATA_DIR: dir,
      ADMIN_KEY: "",
      CONFIG_FILE: "",
      LOG_LEVEL: "warn",
    },
  });
  expect(code, stderr).toBe(0);
  return JSON.parse(stdout);
}

describe("operators set up video channels and prices with the command line and the admin API", () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "mg-video-admin-"));
  let sim: Simulator;
  let gw: TestGateway;

  beforeAll(async () => {
    sim = await startSimulator({ seed: 5, keys: ["sim-key"] });
    // Set up before the gateway starts, as an operator bootstraps a store.
    await cli(dir, [
      "channel",
      "create",
      "--name",
      "videos-cli",
      "--type",
      "openai-videos",
      "--base-url",
      sim.url,
      "--key",
      "sim-key",
      "--models",
      "sora-2-pro",
    ]);
    await cli(dir, ["price", "set", "task", "video:sora-2-pro", "--price", "0.25"]);
    gw = await startTestGateway("sqlite", FAST_VIDEOS, { dataDir: dir });
  });
  afterAll(async () => {
    await gw?.close();
    await sim?.close();
  });

  it("serves a model on a channel the command line made, at the price it set, per second", async () => {
    const user = await gw.createUser({ quota: 10_000_000 });
    const client = clientOf(gw, user.key);
    const done = await untilEnded(
      client,
      (await client.videos.create({ prompt: "set up by hand", model: "sora-2-pro", seconds: "8" })).id,
    );
    expect(done).toMatchObject({ status: "completed", model: "sora-2-pro", seconds: "8" });
    const price = Math.round(0.25 * 8 * gw.gateway.ctx.config.quotaPerUnit);
    expect(await ledgerRowsOf(gw, user.userId, done.id)).toEqual([
      { kind: "settle", amount: 0 },
      { kind: "charge", amount: -price },
    ]);
  });

  it("takes polls_per_second on an openai-videos channel through the admin API, within its bounds", async () => {
    const base = { name: "videos-api", type: "openai-videos", base_url: sim.url, key: "sim-key", models: ["sora-2"] };
    const made = await gw.admin("POST", "/channels", { ...base, settings: { polls_per_second: 4 } });
    expect(made.status).toBe(200);
    expect(made.body.data.settings).toEqual({ polls_per_second: 4 });
    expect(JSON.stringify(made.body)).not.toContain("sim-key");
    const refused = await gw.admin("POST", "/channels", { ...base, name: "bad", settings: { polls_per_second: 0 } });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toContain("polls_per_second");
  });
});
