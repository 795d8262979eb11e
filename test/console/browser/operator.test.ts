import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Simulator, startSimulator } from "../../../src/simulator/server.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { createOperator, PASSWORD, TEST_PASSWORD_COST } from "../console-client.js";
import {
  CHROMIUM,
  fetchInPage,
  launchBrowser,
  layoutShift,
  openPage,
  pageCookies,
  scrollsSideways,
  unlabelledControls,
} from "./browser.js";

/**
 * The operator's console in a real browser, on a real gateway and simulator: sign-in, a user and
 * a channel made through the pages, a top-up, and a task's charge in the overview and the ledger.
 */
describe.skipIf(CHROMIUM === null)("console in a browser: operator", { timeout: 60_000 }, () => {
  let sim: Simulator;
  let gw: TestGateway;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let problems: string[];
  const scripts: Array<{ url: string; bytes: number; encoding: string | null }> = [];

  beforeAll(async () => {
    sim = await startSimulator({ keys: ["sim-key"], taskRelay: { completeAfterMs: 0 } });
    gw = await startTestGateway("sqlite", { logLevel: "warn", console: { passwordCost: TEST_PASSWORD_COST } });
    await createOperator(gw, "root");
    browser = await launchBrowser();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    ({ page, problems } = await openPage(context));
    page.on("response", async (res) => {
      if (res.request().resourceType() !== "script") return;
      const sizes = await res.request().sizes();
      scripts.push({
        url: res.url(),
        bytes: sizes.responseBodySize,
        encoding: res.headers()["content-encoding"] ?? null,
      });
    });
  });
  afterAll(async () => {
    await browser?.close();
    await gw?.close();
    await sim?.close();
  });

  it("serves the first load with a strict CSP, under 250 KB of compressed script", async () => {
    const res = await page.goto(`${gw.url}/console`);
    expect(res?.status()).toBe(200);
    const headers = res?.headers() ?? {};
    expect(headers["content-security-policy"]).toContain("script-src 'self'");
    expect(headers["content-security-policy"]).toContain("frame-ancestors 'none'");
    expect(headers["content-security-policy"]).not.toContain("unsafe");
    expect(headers["x-content-type-options"]).toBe("nosniff");
    expect(headers["referrer-policy"]).toBe("no-referrer");
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    expect(scripts.length).toBeGreaterThan(0);
    expect(scripts.every((s) => s.encoding === "br" || s.encoding === "gzip")).toBe(true);
    const total = scripts.reduce((sum, s) => sum + s.bytes, 0);
    expect(total).toBeGreaterThan(1000);
    expect(total).toBeLessThan(250 * 1024);
    expect(await unlabelledControls(page)).toEqual([]);
  });

  it("signs the operator in with an HttpOnly, SameSite=Strict session cookie", async () => {
    await page.getByLabel("Name or email").fill("root");
    await page.getByLabel("Password").fill("a wrong password");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("alert").filter({ hasText: /./ }).waitFor();
    expect(await context.cookies()).toEqual([]);

    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Overview" }).waitFor();
    expect(new URL(page.url()).pathname).toBe("/console/overview");
    const cookie = (await context.cookies()).find((c) => c.name === "mg_session");
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Strict", path: "/" });
    // The cookie never reaches the page's script.
    expect(await pageCookies(page)).not.toContain("mg_session");
  });

  it("refuses a state change without the CSRF token, even from the console's own page", async () => {
    const without = await fetchInPage(page, "POST", "/api/admin/users", { body: { name: "no-csrf" } });
    expect(without.status).toBe(403);
    const wrong = await fetchInPage(page, "POST", "/api/admin/users", { body: { name: "no-csrf" }, csrf: "nope" });
    expect(wrong.status).toBe(403);
    const listed = await gw.admin("GET", "/users?q=no-csrf");
    expect(listed.body.data).toEqual([]);
  });

  let userId = 0;
  let channelName = "";

  it("creates a user and tops it up with a reference", async () => {
    await page.getByRole("link", { name: "Users" }).click();
    await page.getByRole("heading", { name: "Users" }).waitFor();
    await page.getByLabel("Name", { exact: true }).fill("carol");
    await page.getByRole("button", { name: "Create user" }).click();
    await page.getByRole("heading", { name: "User carol" }).waitFor();
    userId = Number(new URL(page.url()).pathname.split("/").pop());
    expect((await gw.admin("GET", `/users/${userId}`)).body.data).toMatchObject({ name: "carol", quota: 0 });

    await page.getByLabel("Amount (quota)").fill("500000");
    await page.getByLabel("Reference").fill("invoice-42");
    await page.getByRole("button", { name: "Top up" }).click();
    await page.getByText("Topped up; the balance is 500,000.").waitFor();
    await expect.poll(() => page.getByTestId("user-balance").textContent()).toBe("500,000");
    // The same reference again changes nothing.
    await page.getByLabel("Amount (quota)").fill("500000");
    await page.getByRole("button", { name: "Top up" }).click();
    await page.getByText("This reference was applied before").waitFor();
    expect((await gw.admin("GET", `/users/${userId}`)).body.data.quota).toBe(500_000);
    await page.getByRole("cell", { name: "invoice-42" }).waitFor();
  });

  it("finds users by a part of their name, the server doing the search", async () => {
    await gw.admin("POST", "/users", { name: "someone-else" });
    await page.getByRole("link", { name: "Users" }).click();
    await page.getByRole("cell", { name: "someone-else" }).waitFor();
    await page.getByLabel("Search by name or email").fill("aro");
    await page.getByRole("button", { name: "Search" }).click();
    await expect.poll(() => page.locator("tbody tr").allTextContents()).toEqual([expect.stringContaining("carol")]);
    await page.getByLabel("Search by name or email").fill("nobody-has-this");
    await page.getByRole("button", { name: "Search" }).click();
    await page.getByRole("cell", { name: "Nothing here yet." }).waitFor();
  });

  it("creates a channel with a write-only key", async () => {
    await page.getByRole("link", { name: "Channels" }).click();
    await page.getByRole("heading", { name: "Channels" }).waitFor();
    channelName = "sim-relay";
    await page.getByLabel("Name", { exact: true }).fill(channelName);
    await page.getByLabel("Type").selectOption("task-relay");
    await page.getByLabel("Base URL").fill(sim.url);
    await page.getByLabel("Key", { exact: true }).fill("sim-key");
    await page.getByLabel("Models (comma-separated)").fill("audioa");
    await page.getByRole("button", { name: "Create channel" }).click();
    await page.getByRole("cell", { name: channelName, exact: true }).waitFor();
    const channels = (await gw.admin("GET", "/channels")).body.data as Array<Record<string, unknown>>;
    const made = channels.find((c) => c.name === channelName);
    expect(made).toMatchObject({ type: "task-relay", base_url: sim.url, models: ["audioa"] });
    expect(JSON.stringify(made)).not.toContain("sim-key");
    expect(await page.content()).not.toContain("sim-key");

    // Tested with one upstream call, then disabled and enabled again from its row.
    await page.getByRole("button", { name: `Test ${channelName}` }).click();
    await page.getByText(new RegExp(`${channelName}: the test passed in \\d+ ms`)).waitFor();
    await page.getByRole("button", { name: `Disable ${channelName}` }).click();
    await page.getByRole("button", { name: `Enable ${channelName}` }).waitFor();
    expect((await gw.admin("GET", `/channels/${made?.id}`)).body.data.status).toBe("disabled");
    await page.getByRole("button", { name: `Enable ${channelName}` }).click();
    await page.getByRole("button", { name: `Disable ${channelName}` }).waitFor();
    expect((await gw.admin("GET", `/channels/${made?.id}`)).body.data.status).toBe("enabled");

    // Its key pool: two more keys imported as text, shown masked with their state.
    const pooled = ["console-pool-key-aaaaaaaa-7001", "console-pool-key-bbbbbbbb-7002"];
    await page.getByRole("button", { name: `Keys of ${channelName}` }).click();
    await page.getByLabel("Keys, one a line (lines starting with # are skipped)").fill(pooled.join("\n"));
    await page.getByRole("button", { name: "Add keys" }).click();
    await page.getByText("2 key(s) added.").waitFor();
    await page.getByRole("cell", { name: "****7002", exact: true }).waitFor();
    await page.getByRole("button", { name: "Disable key ****7001" }).click();
    await page.getByRole("button", { name: "Enable key ****7001" }).waitFor();
    const keys = (await gw.admin("GET", `/channels/${made?.id}/keys`)).body.data as Array<{
      key: string;
      state: string;
    }>;
    expect(keys.map((k) => [k.key, k.state])).toEqual([
      ["****", "live"],
      ["****7001", "disabled"],
      ["****7002", "live"],
    ]);
    const html = await page.content();
    for (const key of pooled) expect(html).not.toContain(key);
    await page.getByRole("button", { name: "Close" }).click();
  });

  it("offers every channel type the gateway lists, and creates an openai-videos channel", async () => {
    const listed = (await gw.admin("GET", "/channel-types")).body.data as Array<{ type: string }>;
    const offered = await page
      .getByLabel("Type")
      .locator("option")
      .evaluateAll((options) => options.map((o) => (o as unknown as { value: string }).value));
    expect(offered).toEqual(listed.map((t) => t.type));
    await page.getByLabel("Name", { exact: true }).fill("sim-videos");
    await page.getByLabel("Type").selectOption("openai-videos");
    await page.getByText(/OpenAI Videos API.*Serves videos \(video\)/).waitFor();
    await page.getByLabel("Base URL").fill(sim.url);
    await page.getByLabel("Key", { exact: true }).fill("sim-key");
    await page.getByLabel("Models (comma-separated)").fill("sora-2");
    await page.getByRole("button", { name: "Create channel" }).click();
    await page.getByRole("cell", { name: "sim-videos", exact: true }).waitFor();
    const channels = (await gw.admin("GET", "/channels")).body.data as Array<Record<string, unknown>>;
    expect(channels.find((c) => c.name === "sim-videos")).toMatchObject({ type: "openai-videos", models: ["sora-2"] });
  });

  it("shows the charge of a task the user runs in the overview chart and in the user's ledger", async () => {
    const token = await gw.admin("POST", `/users/${userId}/tokens`, { name: "app" });
    const key = token.body.data.key as string;
    const submit = await fetch(`${gw.url}/audioa/submit/MUSIC`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ gpt_description_prompt: "a song about the browser", mv: "chirp-v3-5" }),
    });
    const taskId = ((await submit.json()) as { data: string }).data;
    expect(submit.status).toBe(200);
    const charge = 500_000 - (await gw.balance(userId));
    expect(charge).toBeGreaterThan(0);

    await page.getByRole("link", { name: "Overview" }).click();
    await page.getByRole("heading", { name: "Overview" }).waitFor();
    await expect.poll(() => page.getByTestId("spend-total").textContent()).toBe(charge.toLocaleString("en"));
    // The chart draws a series for the model the task asked for (uPlot's legend names each series).
    const spendChart = page.locator("figure", { has: page.getByText("Spend by model", { exact: true }) });
    await expect.poll(() => spendChart.locator(".u-legend .u-series").allTextContents()).toEqual(["chirp-v3-5"]);
    expect(await spendChart.locator("canvas").count()).toBe(1);
    expect(await layoutShift(page)).toBeLessThan(0.05);
    expect(await unlabelledControls(page)).toEqual([]);

    await page.goto(`${gw.url}/console/users/${userId}`);
    await page.getByRole("heading", { name: "User carol" }).waitFor();
    await page.getByRole("cell", { name: `-${charge.toLocaleString("en")}` }).waitFor();
    expect(await page.getByTestId("user-balance").textContent()).toBe((500_000 - charge).toLocaleString("en"));
    // The user's records are tabs, moved between with the arrow keys.
    await page.getByRole("tab", { name: "Ledger" }).focus();
    await page.keyboard.press("ArrowRight");
    await page.getByRole("cell", { name: "app", exact: true }).waitFor();
    expect(await page.getByRole("tab", { name: "Tokens" }).getAttribute("aria-selected")).toBe("true");
    await page.keyboard.press("ArrowRight");
    await page.getByRole("link", { name: taskId }).waitFor();

    // The task is in the tasks browser, and its page shows its record and history.
    await page.goto(`${gw.url}/console/tasks/${taskId}`);
    await page.getByRole("heading", { name: `Task ${taskId}` }).waitFor();
    const history = page.getByRole("table", { name: "Upstream history" });
    await expect.poll(() => history.locator("tbody tr").first().textContent()).not.toMatch(/Loading|Nothing here/);
    await page.getByText(String(userId), { exact: true }).first().waitFor();
    expect(await unlabelledControls(page)).toEqual([]);
  });

  it("turns self sign-up on, after which a visitor signs up from the sign-in page", async () => {
    await page.getByRole("link", { name: "Settings" }).click();
    const box = page.getByLabel("Let people sign up by themselves");
    await expect.poll(() => box.isEnabled()).toBe(true);
    expect(await box.isChecked()).toBe(false);
    await box.check();
    await page.getByText("Self sign-up is on.").waitFor();

    const visitor = await browser.newContext();
    const { page: p, problems: visitorProblems } = await openPage(visitor);
    await p.goto(`${gw.url}/console`);
    await p.getByRole("link", { name: "Sign up" }).click();
    await p.getByRole("heading", { name: "Sign up" }).waitFor();
    await p.getByLabel("Name").fill("frank");
    await p.getByLabel("Email").fill("frank@example.com");
    await p.getByLabel("Password").fill("frank's long password");
    await p.getByRole("button", { name: "Create account" }).click();
    await p.getByRole("heading", { name: "Balance and spend" }).waitFor();
    const found = await gw.admin("GET", "/users?q=frank");
    expect(found.body.data).toHaveLength(1);
    expect(visitorProblems).toEqual([]);
    await visitor.close();
  });

  it("fits a 375 px wide screen without sideways scrolling", async () => {
    const narrow = await browser.newContext({
      viewport: { width: 375, height: 812 },
      storageState: await context.storageState(),
    });
    const { page: small, problems: smallProblems } = await openPage(narrow);
    for (const path of [
      "/overview",
      "/users",
      `/users/${userId}`,
      "/channels",
      "/prices",
      "/tasks",
      "/logs",
      "/webhooks",
      "/settings",
    ]) {
      await small.goto(`${gw.url}/console${path}`);
      await small.locator("#page-title").waitFor();
      await small.waitForLoadState("networkidle");
      expect({ path, sideways: await scrollsSideways(small) }).toEqual({ path, sideways: false });
      expect({ path, unlabelled: await unlabelledControls(small) }).toEqual({ path, unlabelled: [] });
    }
    // The menu opens from the keyboard.
    await small.getByRole("button", { name: "Menu" }).focus();
    await small.keyboard.press("Enter");
    await small.getByRole("link", { name: "Channels" }).waitFor();
    expect(smallProblems).toEqual([]);
    await narrow.close();
  });

  it("met no CSP violation and no script error", () => {
    expect(problems).toEqual([]);
  });
});
