import type { Browser, BrowserContext } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { ConsoleClient, createConsoleUser, createOperator, PASSWORD, TEST_PASSWORD_COST } from "../console-client.js";
import { CHROMIUM, launchBrowser, openPage, unlabelledControls } from "./browser.js";

/** Redemption codes in a real browser: an operator generates and exports a batch, a user redeems a code. */
describe.skipIf(CHROMIUM === null)("console in a browser: redemption codes", { timeout: 60_000 }, () => {
  let gw: TestGateway;
  let browser: Browser;
  let context: BrowserContext;
  let code = "";

  beforeAll(async () => {
    gw = await startTestGateway("sqlite", { logLevel: "warn", console: { passwordCost: TEST_PASSWORD_COST } });
    await createOperator(gw, "root");
    await createConsoleUser(gw, "frank", { quota: 0 });
    browser = await launchBrowser();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 }, acceptDownloads: true });
  });
  afterAll(async () => {
    await browser?.close();
    await gw?.close();
  });

  it("lets an operator generate a batch and export its codes once", async () => {
    const { page, problems } = await openPage(context);
    await page.goto(`${gw.url}/console`);
    await page.getByLabel("Name or email").fill("root");
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("link", { name: "Codes" }).click();
    await page.getByRole("heading", { name: "Redemption codes" }).waitFor();
    expect(await unlabelledControls(page)).toEqual([]);
    await page.getByLabel("How many codes").fill("2");
    await page.getByLabel("Each credits (currency)").fill("3");
    await page.getByLabel("Name prefix").fill("promo");
    await page.getByRole("button", { name: "Generate" }).click();
    await page.getByText(/Batch \d+ generated/).waitFor();
    const downloading = page.waitForEvent("download");
    await page.getByRole("button", { name: /^Export batch/ }).click();
    const download = await downloading;
    const path = await download.path();
    const { readFileSync } = await import("node:fs");
    const lines = readFileSync(path, "utf8").trim().split("\r\n");
    expect(lines).toHaveLength(3);
    code = lines[1]?.split(",")[0] ?? "";
    expect(code).toMatch(/^PROMO(-[0-9A-Z]{5}){4}$/);
    await page.getByText(/exported: keep the file/).waitFor();
    expect(await page.getByRole("button", { name: /^Export batch/ }).isDisabled()).toBe(true);
    await page.getByRole("button", { name: /^Codes of batch/ }).click();
    await page.getByRole("heading", { name: /Codes of batch/ }).waitFor();
    expect(await page.locator("td code").count()).toBe(2);
    expect(problems).toEqual([]);
    await page.close();
  });

  it("lets a user redeem the code from the overview, once", async () => {
    const userContext = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const { page, problems } = await openPage(userContext);
    await page.goto(`${gw.url}/console`);
    await page.getByLabel("Name or email").fill("frank");
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Balance and spend" }).waitFor();
    await page.getByLabel("Code").fill(code.toLowerCase());
    await page.getByRole("button", { name: "Redeem" }).click();
    await page.getByText(/Credited 3 /).waitFor();
    await page.getByLabel("Code").fill(code);
    await page.getByRole("button", { name: "Redeem" }).click();
    await page.getByText(/already redeemed/).waitFor();
    expect(problems.filter((p) => !p.includes("409"))).toEqual([]);
    await userContext.close();
    const frank = new ConsoleClient(gw.url);
    expect((await frank.login("frank")).status).toBe(200);
    expect((await frank.call("GET", "/console/api/me")).body.quota).toBe(1_500_000);
  });
});
