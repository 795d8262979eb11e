import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Simulator, startSimulator } from "../../../src/simulator/server.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { TEST_PASSWORD_COST } from "../console-client.js";
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

const NEW_PASSWORD = "a long enough password";

/**
 * A user's console in a real browser: invite -> set password -> signed in -> a token -> an image
 * in the playground -> the image among theirs; and what a user must never reach.
 */
describe.skipIf(CHROMIUM === null)("console in a browser: user", { timeout: 60_000 }, () => {
  let sim: Simulator;
  let gw: TestGateway;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let problems: string[];
  let csrf = "";
  let inviteUrl = "";
  let otherTaskId = "";
  let daveId = 0;

  beforeAll(async () => {
    sim = await startSimulator({ taskRelay: { completeAfterMs: 0 } });
    gw = await startTestGateway("sqlite", {
      logLevel: "warn",
      console: { passwordCost: TEST_PASSWORD_COST },
      // The webhook URL the test sets is on this machine.
      webhooks: { allowPrivateUrls: true },
    });
    await gw.createChannel({ type: "gemini", baseUrl: sim.url, models: ["image-model-2-1k", "gemini-2.5-flash"] });
    await gw.createChannel({ type: "task-relay", baseUrl: sim.url, models: ["audioa"] });
    await gw.createChannel({ type: "openai-videos", baseUrl: sim.url, models: ["sora-2"] });
    const dave = await gw.admin("POST", "/users", { name: "dave", quota: 5_000_000 });
    daveId = dave.body.data.id;
    const invite = await gw.admin("POST", `/users/${dave.body.data.id}/invite`);
    expect(invite.status).toBe(200);
    const link = new URL(invite.body.data.invite_url as string);
    inviteUrl = `${gw.url}${link.pathname}${link.hash}`;
    // Another user's task, which dave must never see.
    const erin = await gw.createUser({ quota: 5_000_000 });
    const submit = await fetch(`${gw.url}/audioa/submit/MUSIC`, {
      method: "POST",
      headers: { authorization: `Bearer ${erin.key}`, "content-type": "application/json" },
      body: JSON.stringify({ gpt_description_prompt: "erin's song", mv: "chirp-v3-5" }),
    });
    otherTaskId = ((await submit.json()) as { data: string }).data;
    expect(otherTaskId).toMatch(/^task_/);

    browser = await launchBrowser();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    ({ page, problems } = await openPage(context));
  });
  afterAll(async () => {
    await browser?.close();
    await gw?.close();
    await sim?.close();
  });

  it("accepts the invite: sets a password and is signed in, with a safe cookie", async () => {
    await page.goto(inviteUrl);
    await page.getByRole("heading", { name: "Set your password" }).waitFor();
    await page.getByText("Welcome, dave.").waitFor();
    expect(await unlabelledControls(page)).toEqual([]);
    await page.getByLabel("New password").fill(NEW_PASSWORD);
    await page.getByLabel("Repeat the password").fill(NEW_PASSWORD);
    await page.getByRole("button", { name: "Set password and sign in" }).click();
    await page.getByRole("heading", { name: "Balance and spend" }).waitFor();
    await expect.poll(() => page.getByTestId("my-balance").textContent()).toBe("5,000,000");
    expect(page.url()).not.toContain("invite");
    const cookie = (await context.cookies()).find((c) => c.name === "mg_session");
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Strict", path: "/" });
    expect(await pageCookies(page)).toBe("");
    csrf = (await fetchInPage(page, "GET", "/console/api/session")).body.csrfToken;
    expect(csrf).toEqual(expect.any(String));
  });

  it("lets the invite link work once", async () => {
    const other = await browser.newContext();
    const p = await other.newPage();
    await p.goto(inviteUrl);
    await p.getByText("This invite link is not valid any more").waitFor();
    await other.close();
  });

  it("signs in again with the new password", async () => {
    const other = await browser.newContext();
    const p = await other.newPage();
    await p.goto(`${gw.url}/console`);
    await p.getByLabel("Name or email").fill("dave");
    await p.getByLabel("Password").fill(NEW_PASSWORD);
    await p.getByRole("button", { name: "Sign in" }).click();
    await p.getByRole("heading", { name: "Balance and spend" }).waitFor();
    await other.close();
  });

  it("creates a token whose key is shown once and works", async () => {
    await page.getByRole("link", { name: "Tokens" }).click();
    await page.getByRole("heading", { name: "Tokens" }).waitFor();
    await page.getByLabel("Name", { exact: true }).fill("my-app");
    await page.getByLabel("Spending limit (quota, empty: none)").fill("100000");
    await page.getByRole("button", { name: "Create token" }).click();
    const key = await page.getByTestId("new-token-key").inputValue();
    expect(key.length).toBeGreaterThan(20);
    await page.getByRole("cell", { name: "my-app", exact: true }).waitFor();
    const models = await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
    expect(models.status).toBe(200);
    await page.reload();
    await page.getByRole("cell", { name: "my-app", exact: true }).waitFor();
    expect(await page.content()).not.toContain(key);
    expect(await unlabelledControls(page)).toEqual([]);
  });

  it("makes an image, a song and a content stream in the playground, and finds the image among theirs", async () => {
    await page.getByRole("link", { name: "Playground" }).click();
    await page.getByRole("heading", { name: "Playground" }).waitFor();
    await page.getByLabel("Image model").fill("image-model-2-1k");
    await page.getByLabel("Image prompt").fill("a lighthouse at dusk");
    await page.getByRole("button", { name: "Generate image" }).click();
    const made = page.getByTestId("playground-images").locator("img");
    await made.first().waitFor();
    await expect.poll(() => made.first().evaluate((img: any) => img.complete && img.naturalWidth)).toBeGreaterThan(0);
    expect(await unlabelledControls(page)).toEqual([]);

    // The content stream shows its text as it arrives.
    await page.getByLabel("API").selectOption("gemini");
    await page.getByLabel("Content model").fill("gemini-2.5-flash");
    await page.getByLabel("Message").fill("say something");
    await page.getByRole("button", { name: "Send" }).click();
    await expect.poll(() => page.getByTestId("stream-output").textContent()).not.toBe("");
    await page.getByRole("button", { name: "Send" }).waitFor();

    // A music task is submitted, followed until it ends, and played.
    await page.getByLabel("Song description").fill("a song about the sea");
    await page.getByRole("button", { name: "Submit music task" }).click();
    await page.getByText(/task_\w+: SUCCESS/).waitFor({ timeout: 20_000 });
    expect(await page.locator("audio").count()).toBeGreaterThan(0);

    await page.getByRole("link", { name: "Images" }).click();
    await page.getByRole("heading", { name: "My images" }).waitFor();
    const mine = page.getByRole("img", { name: "Made with image-model-2-1k" });
    await mine.first().waitFor();
    await expect.poll(() => mine.first().evaluate((img: any) => img.complete && img.naturalWidth)).toBeGreaterThan(0);
    expect(await layoutShift(page)).toBeLessThan(0.05);
  });

  it("plays their videos from the gateway's stored copy", async () => {
    const token = await gw.admin("POST", `/users/${daveId}/tokens`, { name: "videos" });
    const auth = { authorization: `Bearer ${token.body.data.key}`, "content-type": "application/json" };
    const created = await fetch(`${gw.url}/v1/videos`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ prompt: "a paper boat", seconds: "4" }),
    });
    const id = ((await created.json()) as { id: string }).id;
    await expect
      .poll(async () => ((await (await fetch(`${gw.url}/v1/videos/${id}`, { headers: auth })).json()) as any).status, {
        timeout: 20_000,
      })
      .toBe("completed");

    await page.getByRole("link", { name: "Videos" }).click();
    await page.getByRole("heading", { name: "My videos" }).waitFor();
    const player = page.locator(`video[aria-label="Video: a paper boat"]`);
    await player.waitFor();
    // The player's source and poster load with the session cookie alone (no token in the page).
    const loaded = await player.evaluate(async (v: any) => {
      const answers = await Promise.all([fetch(v.src), fetch(v.poster)]);
      return answers.map((a) => `${a.status} ${a.headers.get("content-type")}`);
    });
    expect(loaded).toEqual(["200 video/mp4", "200 image/png"]);
    expect(await page.content()).not.toContain(token.body.data.key);
    expect(await unlabelledControls(page)).toEqual([]);
  });

  it("sets the default webhook URL and rotates the signing secret", async () => {
    await page.getByRole("link", { name: "Webhook" }).click();
    await page.getByRole("heading", { name: "Webhook", exact: true }).waitFor();
    // The field opens once the current URL is loaded, so typing never races the load.
    await expect.poll(() => page.getByLabel("Webhook URL (empty: none)").isEnabled()).toBe(true);
    await page.getByLabel("Webhook URL (empty: none)").fill("http://127.0.0.1:9/dave");
    await page.getByRole("button", { name: "Save URL" }).click();
    await page.getByText("The webhook URL is saved.").waitFor();
    const me = await fetchInPage(page, "GET", "/console/api/me");
    expect(me.body.webhook_url).toBe("http://127.0.0.1:9/dave");
    const secret = page.getByLabel("Secret");
    await expect.poll(() => secret.inputValue()).not.toBe("");
    const before = await secret.inputValue();
    expect(await secret.getAttribute("type")).toBe("password");
    await page.getByRole("button", { name: "Rotate secret" }).click();
    await page.getByText("A new secret is in force").waitFor();
    const after = await secret.inputValue();
    expect(after).not.toBe(before);
    expect((await fetchInPage(page, "GET", "/console/api/me/webhook")).body.secret).toBe(after);
  });

  it("cannot open another user's task", async () => {
    await page.goto(`${gw.url}/console/me/tasks/${otherTaskId}`);
    await page.getByRole("heading", { name: `Task ${otherTaskId}` }).waitFor();
    await page.getByRole("alert").filter({ hasText: /./ }).waitFor();
    expect(await page.content()).not.toContain("erin's song");
    expect((await fetchInPage(page, "GET", `/console/api/me/tasks/${otherTaskId}`)).status).toBe(404);
  });

  it("reaches no operator page nor the admin API", async () => {
    for (const path of ["/overview", "/users", "/channels", "/tasks", "/settings"]) {
      await page.goto(`${gw.url}/console${path}`);
      await page.getByRole("heading", { name: "Not found" }).waitFor();
    }
    expect(await page.getByRole("link", { name: "Users" }).count()).toBe(0);
    for (const url of ["/api/admin/users", "/api/admin/overview", `/api/admin/tasks/${otherTaskId}`]) {
      const answer = await fetchInPage(page, "GET", url);
      expect({ url, refused: [401, 403].includes(answer.status) }).toEqual({ url, refused: true });
    }
    const write = await fetchInPage(page, "POST", "/api/admin/users", { body: { name: "sneaky" }, csrf });
    expect([401, 403]).toContain(write.status);
  });

  it("refuses the user's state changes without the CSRF token", async () => {
    const body = { name: "forged" };
    expect((await fetchInPage(page, "POST", "/console/api/me/tokens", { body })).status).toBe(403);
    expect((await fetchInPage(page, "POST", "/console/api/me/tokens", { body, csrf: "wrong" })).status).toBe(403);
    const tokens = await fetchInPage(page, "GET", "/console/api/me/tokens");
    expect((tokens.body as Array<{ name: string }>).map((t) => t.name)).not.toContain("forged");
  });

  it("fits a 375 px wide screen without sideways scrolling", async () => {
    const narrow = await browser.newContext({
      viewport: { width: 375, height: 812 },
      storageState: await context.storageState(),
    });
    const { page: small, problems: smallProblems } = await openPage(narrow);
    for (const path of [
      "/me",
      "/me/tokens",
      "/me/tasks",
      "/me/images",
      "/me/videos",
      "/me/webhook",
      "/me/playground",
    ]) {
      await small.goto(`${gw.url}/console${path}`);
      await small.locator("#page-title").waitFor();
      await small.waitForLoadState("networkidle");
      expect({ path, sideways: await scrollsSideways(small) }).toEqual({ path, sideways: false });
      expect({ path, unlabelled: await unlabelledControls(small) }).toEqual({ path, unlabelled: [] });
    }
    expect(smallProblems).toEqual([]);
    await narrow.close();
  });

  it("signs out: the session ends on the server", async () => {
    await page.goto(`${gw.url}/console/me`);
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    expect((await fetchInPage(page, "GET", "/console/api/session")).status).toBe(401);
    expect(problems).toEqual([]);
  });
});
