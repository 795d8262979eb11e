import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StoreKind } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";
import { CHAT_MODEL, type ChatHarness, startChatHarness } from "./harness.js";

/**
 * Channel health counts a chat channel's failures per distinct user, as for content: one tenant
 * whose requests keep failing cannot switch a shared channel off for everyone.
 */
for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`chat channel health [${kind}]`, () => {
    let f: ChatHarness;
    beforeAll(async () => {
      f = await startChatHarness(
        kind,
        "openai-chat",
        {},
        {
          logLevel: "warn",
          routing: { disableAfterFailures: 2, disableMinUsers: 2 },
        },
      );
    });
    afterAll(async () => {
      await f?.close();
    });

    const statusOf = async () => (await f.gw.gateway.ctx.channels.get(f.channelId))?.status;
    const failingCall = (key: string) =>
      fetch(`${f.gw.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: CHAT_MODEL, messages: [{ role: "user", content: "[503] fail" }] }),
      });

    it("keeps the channel on while one user's calls fail, and disables it once a second user's do", async () => {
      const first = await f.gw.createUser({ quota: 50_000_000 });
      for (let i = 0; i < 4; i++) expect((await failingCall(first.key)).status).toBeGreaterThanOrEqual(500);
      await f.gw.gateway.ctx.health.flush();
      expect(await statusOf()).toBe("enabled");
      const second = await f.gw.createUser({ quota: 50_000_000 });
      for (let i = 0; i < 2; i++) expect((await failingCall(second.key)).status).toBeGreaterThanOrEqual(500);
      for (let i = 0; i < 200 && (await statusOf()) !== "auto_disabled"; i++) {
        await new Promise((r) => setTimeout(r, 10));
      }
      expect(await statusOf()).toBe("auto_disabled");
    });
  });
}
