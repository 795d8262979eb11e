// Screenshots of each main page of the console, desktop (1280x800) and narrow (375x812), into
// docs/console/. Starts a gateway on a temporary SQLite store with the simulator behind it, fills
// it with a little traffic, then drives the system's Chromium. Run by hand:
//   npx tsx scripts/console-screenshots.ts
import { mkdirSync } from "node:fs";
import path from "node:path";
import type { Page } from "playwright-core";
import { hashPassword } from "../src/auth/passwords.js";
import { startSimulator } from "../src/simulator/server.js";
import { launchBrowser } from "../test/console/browser/browser.js";
import { startTestGateway } from "../test/support/gateway.js";

const OUT = path.resolve(import.meta.dirname, "..", "docs", "console");
const PASSWORD = "screenshots only";
const SIZES = { desktop: { width: 1280, height: 800 }, narrow: { width: 375, height: 812 } };

async function main() {
  mkdirSync(OUT, { recursive: true });
  const sim = await startSimulator({ taskRelay: { completeAfterMs: 0 } });
  const gw = await startTestGateway("sqlite", { logLevel: "warn", console: { passwordCost: 4 } });
  const accounts = gw.gateway.ctx.console.accounts;
  await accounts.createOperator("root", await hashPassword(PASSWORD, 4));
  await gw.createChannel({
    type: "gemini",
    baseUrl: sim.url,
    models: ["image-model-2-1k", "gemini-2.5-flash"],
    name: "gemini",
  });
  await gw.createChannel({ type: "task-relay", baseUrl: sim.url, models: ["audioa"], name: "audio-relay" });
  await gw.createChannel({ type: "openai-videos", baseUrl: sim.url, models: ["sora-2"], name: "videos" });

  const users: Array<{ userId: number; key: string }> = [];
  for (const name of ["ada", "grace", "linus"]) {
    const u = await gw.createUser({ quota: 20_000_000 });
    await gw.admin("PATCH", `/users/${u.userId}`, { name });
    users.push(u);
  }
  const ada = users[0];
  if (!ada) throw new Error("no user");
  await accounts.setUserEmail(ada.userId, "ada@example.com");
  await accounts.setUserPassword(ada.userId, await hashPassword(PASSWORD, 4));
  await gw.admin("POST", `/users/${ada.userId}/topup`, { amount: 5_000_000, reference: "invoice-2026-001" });
  const call = (key: string, url: string, body: unknown) =>
    fetch(`${gw.url}${url}`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    }).then((r) => r.text());
  let taskId = "";
  for (const [i, u] of users.entries()) {
    for (let n = 0; n <= i; n++) {
      const answer = JSON.parse(
        await call(u.key, "/audioa/submit/MUSIC", { gpt_description_prompt: `song ${n}`, mv: "chirp-v3-5" }),
      );
      if (u === ada) taskId = answer.data;
      await call(u.key, "/v1/images/generations", { model: "image-model-2-1k", prompt: `picture ${n}` });
      await call(u.key, "/v1/chat/completions", {
        model: "gemini-2.5-flash",
        messages: [{ role: "user", content: "hi" }],
      });
    }
  }
  for (const prompt of ["a paper boat on a pond", "a kite over the dunes"]) {
    await call(ada.key, "/v1/videos", { prompt, seconds: "4", size: "1280x720" });
  }
  await new Promise((r) => setTimeout(r, 1500));

  const browser = await launchBrowser();
  const shoot = async (role: "operator" | "user", pages: Array<[string, string]>) => {
    for (const [size, viewport] of Object.entries(SIZES)) {
      const context = await browser.newContext({ viewport });
      const page = await context.newPage();
      await page.goto(`${gw.url}/console`);
      await page.getByRole("heading", { name: "Sign in" }).waitFor();
      if (role === "operator") await snap(page, `sign-in-${size}`);
      await page.getByLabel("Name or email").fill(role === "operator" ? "root" : "ada");
      await page.getByLabel("Password").fill(PASSWORD);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.locator("#page-title").waitFor();
      for (const [name, url] of pages) {
        await page.goto(`${gw.url}/console${url}`);
        await page.locator("#page-title").waitFor();
        await page.waitForLoadState("networkidle");
        await page.waitForTimeout(300);
        await snap(page, `${name}-${size}`);
      }
      await context.close();
    }
  };
  await shoot("operator", [
    ["overview", "/overview"],
    ["users", "/users"],
    ["user", `/users/${ada.userId}`],
    ["channels", "/channels"],
    ["prices", "/prices"],
    ["tasks", "/tasks"],
    ["task", `/tasks/${taskId}`],
    ["request-log", "/logs"],
    ["webhooks", "/webhooks"],
    ["settings", "/settings"],
  ]);
  await shoot("user", [
    ["me", "/me"],
    ["tokens", "/me/tokens"],
    ["my-tasks", "/me/tasks"],
    ["my-images", "/me/images"],
    ["my-videos", "/me/videos"],
    ["webhook", "/me/webhook"],
    ["playground", "/me/playground"],
  ]);
  await browser.close();
  await gw.close();
  await gw.dropStore();
  await sim.close();
}

async function snap(page: Page, name: string) {
  await page.screenshot({ path: path.join(OUT, `${name}.png`), fullPage: false });
  process.stdout.write(`docs/console/${name}.png\n`);
}

main().catch((err) => {
  process.stderr.write(`${err.stack ?? err}\n`);
  process.exit(1);
});
