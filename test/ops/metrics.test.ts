import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UpstreamError } from "../../src/core/upstream-error.js";
import { countUpstreamCall } from "../../src/metrics/index.js";
import { type StoreKind, startTestGateway, type TestGateway } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";
import { type Family, parsePrometheusText, sampleSum } from "./prometheus-text.js";

async function scrape(url: string, key?: string): Promise<Map<string, Family>> {
  const res = await fetch(`${url}/metrics`, { headers: key ? { authorization: `Bearer ${key}` } : {} });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  return parsePrometheusText(await res.text());
}

const METRICS_KEY = "metrics-key-0123456789abcdef";

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`/metrics [${kind}]`, () => {
    let gw: TestGateway;
    beforeAll(async () => {
      gw = await startTestGateway(kind);
    });
    afterAll(async () => {
      await gw?.close();
    });

    it("serves Prometheus text with every gateway metric family declared", async () => {
      const families = await scrape(gw.url);
      for (const name of [
        "gateway_http_requests_total",
        "gateway_http_request_duration_seconds",
        "gateway_upstream_calls_total",
        "gateway_tasks",
        "gateway_open_charges",
        "gateway_task_poll_lag_seconds",
        "gateway_task_poll_batch_size",
        "gateway_quota_charged_total",
        "gateway_quota_refunded_total",
        "gateway_quota_settled_total",
        "gateway_quota_topped_up_total",
        "gateway_rate_limited_requests_total",
        "gateway_image_input_bytes",
        "process_cpu_seconds_total",
      ]) {
        expect(families.has(name), name).toBe(true);
      }
      expect(families.get("gateway_http_request_duration_seconds")?.type).toBe("histogram");
    });

    it("counts requests by route pattern and status code, not by raw URL", async () => {
      const before = await scrape(gw.url);
      for (let i = 0; i < 3; i++) await fetch(`${gw.url}/healthz`);
      expect((await gw.admin("GET", "/users/987654")).status).toBe(404);
      expect((await gw.admin("GET", "/users/987655")).status).toBe(404);
      await fetch(`${gw.url}/no/such/path/123`);
      const after = await scrape(gw.url);

      const delta = (labels: Record<string, string>) =>
        sampleSum(after, "gateway_http_requests_total", labels) -
        sampleSum(before, "gateway_http_requests_total", labels);
      expect(delta({ method: "GET", route: "/healthz", status_code: "200" })).toBe(3);
      expect(delta({ method: "GET", route: "/api/admin/users/:id", status_code: "404" })).toBe(2);
      expect(delta({ route: "(unmatched)", status_code: "404" })).toBe(1);
      const routes = after.get("gateway_http_requests_total")?.samples.map((s) => s.labels.route) ?? [];
      expect(routes.some((r) => r?.includes("987654"))).toBe(false);
      expect(
        sampleSum(after, "gateway_http_request_duration_seconds_count", { route: "/healthz" }) -
          sampleSum(before, "gateway_http_request_duration_seconds_count", { route: "/healthz" }),
      ).toBe(3);
    });

    it("counts quota topped up, charged, settled and refunded as the ledger commits it", async () => {
      const { userId, tokenId } = await gw.createUser({ quota: 10_000 });
      const ledger = gw.gateway.ctx.ledger;
      const before = await scrape(gw.url);

      await ledger.charge({ userId, tokenId, amount: 700, reference: `metrics:${kind}:a` });
      await ledger.settle(`metrics:${kind}:a`, 500);
      await ledger.charge({ userId, tokenId, amount: 300, reference: `metrics:${kind}:b` });
      await ledger.refund(`metrics:${kind}:b`);
      await ledger.refund(`metrics:${kind}:b`); // applied once only
      // A charge whose transaction rolls back moved no quota and is not counted.
      await expect(
        ledger.transaction(async (trx) => {
          await ledger.chargeIn(trx, { userId, tokenId, amount: 50, reference: `metrics:${kind}:c` });
          throw new Error("rolled back");
        }),
      ).rejects.toThrow("rolled back");

      const after = await scrape(gw.url);
      const delta = (name: string, labels: Record<string, string> = {}) =>
        sampleSum(after, name, labels) - sampleSum(before, name, labels);
      expect(delta("gateway_quota_charged_total")).toBe(1000);
      expect(delta("gateway_quota_settled_total", { direction: "returned" })).toBe(200);
      expect(delta("gateway_quota_refunded_total")).toBe(300);
      expect(await gw.balance(userId)).toBe(10_000 - 500);
    });

    it("reports tasks by family and state from the store at scrape time", async () => {
      const { userId } = await gw.createUser();
      const channelId = await gw.createChannel({
        type: "task-relay",
        baseUrl: "http://127.0.0.1:9",
        models: ["audioa"],
      });
      const now = Math.floor(Date.now() / 1000);
      const row = (n: number, platform: string, status: string) => ({
        task_id: `task_metrics${kind}${n}`,
        platform,
        user_id: userId,
        token_id: null,
        group: "default",
        channel_id: channelId,
        quota: 1,
        action: "MUSIC",
        status,
        fail_reason: "",
        result_url: null,
        submit_time: now,
        start_time: now,
        finish_time: 0,
        progress: "0%",
        properties: "{}",
        data: "{}",
        request_body: "{}",
        upstream_id: null,
        upstream_status: null,
        // Not due for an hour: the gateway's own poller leaves these rows alone during the test.
        next_poll_at: Date.now() + 3_600_000,
        lease_owner: null,
        lease_until: 0,
        callback_secret: null,
        created_at: now,
        updated_at: now,
      });
      await gw.gateway.ctx.store.db
        .insertInto("tasks")
        .values([row(1, "audioa", "IN_PROGRESS"), row(2, "audioa", "IN_PROGRESS"), row(3, "audiob", "SUCCESS")])
        .execute();
      const families = await scrape(gw.url);
      expect(sampleSum(families, "gateway_tasks", { platform: "audioa", status: "IN_PROGRESS" })).toBe(2);
      expect(sampleSum(families, "gateway_tasks", { platform: "audiob", status: "SUCCESS" })).toBe(1);
      expect(sampleSum(families, "gateway_tasks", { platform: "audiob", status: "FAILURE" })).toBe(0);
      expect(families.get("gateway_tasks")?.samples.some((s) => s.labels.status === "NOT_START")).toBe(true);
    });

    it("counts open charges, and those past their close-by time, at scrape time", async () => {
      const { userId, tokenId } = await gw.createUser({ quota: 1_000 });
      const before = await scrape(gw.url);
      const open = (families: typeof before, overdue: string) =>
        sampleSum(families, "gateway_open_charges", { overdue });
      const ledger = gw.gateway.ctx.ledger;
      await ledger.charge({
        userId,
        tokenId,
        amount: 10,
        reference: "content:gauge-1",
        closeBy: Date.now() + 3_600_000,
      });
      await ledger.charge({ userId, tokenId, amount: 10, reference: "content:gauge-2", closeBy: Date.now() - 1 });
      const after = await scrape(gw.url);
      expect(open(after, "false") - open(before, "false")).toBe(1);
      expect(open(after, "true") - open(before, "true")).toBe(1);
      await ledger.refund("content:gauge-1");
      await ledger.refund("content:gauge-2");
      const closed = await scrape(gw.url);
      expect(open(closed, "false")).toBe(open(before, "false"));
      expect(open(closed, "true")).toBe(open(before, "true"));
    });

    it("exposes the upstream, poller and rate-limit metrics the surfaces and workers feed", async () => {
      const metrics = gw.gateway.ctx.metrics;
      const before = await scrape(gw.url);
      countUpstreamCall(metrics, { id: 41, type: "gemini" }, null);
      countUpstreamCall(metrics, { id: 41, type: "gemini" }, new UpstreamError("retryable", "upstream answered 503"));
      countUpstreamCall(metrics, { id: 41, type: "gemini" }, new UpstreamError("auth", "upstream answered 401"));
      metrics.pollLag.observe({ platform: "audioa" }, 0.3);
      metrics.pollBatchSize.observe({ platform: "audioa" }, 25);
      metrics.rateLimited.inc({ surface: "tasks" });
      const after = await scrape(gw.url);
      const delta = (name: string, labels: Record<string, string> = {}) =>
        sampleSum(after, name, labels) - sampleSum(before, name, labels);
      for (const outcome of ["ok", "retryable", "auth"]) {
        expect(delta("gateway_upstream_calls_total", { channel: "41", type: "gemini", outcome })).toBe(1);
      }
      expect(delta("gateway_task_poll_lag_seconds_count", { platform: "audioa" })).toBe(1);
      expect(delta("gateway_task_poll_batch_size_bucket", { platform: "audioa", le: "50" })).toBe(1);
      expect(delta("gateway_task_poll_batch_size_bucket", { platform: "audioa", le: "20" })).toBe(0);
      expect(delta("gateway_rate_limited_requests_total", { surface: "tasks" })).toBe(1);
    });

    it("keeps each gateway's series apart when two run in one process", async () => {
      const other = await startTestGateway(kind);
      try {
        const before = await scrape(gw.url);
        await fetch(`${other.url}/readyz`);
        await fetch(`${other.url}/readyz`);
        const after = await scrape(gw.url);
        const route = { route: "/readyz" };
        expect(sampleSum(after, "gateway_http_requests_total", route)).toBe(
          sampleSum(before, "gateway_http_requests_total", route),
        );
        expect(sampleSum(await scrape(other.url), "gateway_http_requests_total", route)).toBe(2);
      } finally {
        await other.close();
      }
    });
  });

  describe.skipIf(kind === "postgres" && !HAS_PG)(`/metrics behind METRICS_KEY [${kind}]`, () => {
    let gw: TestGateway;
    beforeAll(async () => {
      gw = await startTestGateway(kind, { metricsKey: METRICS_KEY });
    });
    afterAll(async () => {
      await gw?.close();
    });

    it("refuses a scrape without the key or with a wrong one, in the envelope shape", async () => {
      const attempts: Record<string, string>[] = [
        {},
        { authorization: "Bearer wrong-key" },
        { authorization: `Basic ${METRICS_KEY}` },
      ];
      for (const headers of attempts) {
        const res = await fetch(`${gw.url}/metrics`, { headers });
        expect(res.status).toBe(401);
        const body = await res.json();
        expect(body).toMatchObject({ code: "unauthenticated", data: null });
        expect(JSON.stringify(body)).not.toContain(METRICS_KEY);
      }
    });

    it("serves the scrape with the key", async () => {
      const families = await scrape(gw.url, METRICS_KEY);
      expect(families.has("gateway_http_requests_total")).toBe(true);
    });

    it("leaves /healthz and /readyz open", async () => {
      expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
      expect((await fetch(`${gw.url}/readyz`)).status).toBe(200);
    });
  });
}

describe("/metrics on a gateway listening beyond loopback", () => {
  it.each([
    ["without METRICS_KEY: 403 naming the remedy", {}, 403],
    ["with METRICS_KEY: the key is needed", { metricsKey: METRICS_KEY }, 401],
    ["with METRICS_PUBLIC=true: served to anyone", { metricsPublic: true }, 200],
  ] as const)("%s", async (_name, overrides, unkeyed) => {
    const gw = await startTestGateway("sqlite", { host: "0.0.0.0", logLevel: "warn", ...overrides });
    try {
      const port = new URL(gw.url).port;
      const res = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(res.status).toBe(unkeyed);
      if (unkeyed === 403) {
        const body = (await res.json()) as { code: string; message: string; data: null };
        expect(body).toMatchObject({ code: "metrics_key_required", data: null });
        expect(body.message).toContain("METRICS_KEY");
      }
      if ("metricsKey" in overrides) {
        const keyed = await fetch(`http://127.0.0.1:${port}/metrics`, {
          headers: { authorization: `Bearer ${METRICS_KEY}` },
        });
        expect(keyed.status).toBe(200);
      }
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    } finally {
      await gw.close();
    }
  });

  it("on loopback, without METRICS_KEY, it is served as before", async () => {
    const gw = await startTestGateway("sqlite", { logLevel: "warn" });
    try {
      expect((await fetch(`${gw.url}/metrics`)).status).toBe(200);
    } finally {
      await gw.close();
    }
  });
});
