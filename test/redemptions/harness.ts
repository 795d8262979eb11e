import { expect } from "vitest";
import type { TestGateway } from "../support/gateway.js";

/** Generates a batch through the admin API and exports it: the batch and its full codes. */
export async function generateCodes(gw: TestGateway, body: Record<string, unknown>) {
  const made = await gw.admin("POST", "/redemption-batches", body);
  expect(made.status).toBe(200);
  const batch = made.body.data;
  const res = await fetch(`${gw.url}/api/admin/redemption-batches/${batch.id}/export`, {
    method: "POST",
    headers: { authorization: `Bearer ${gw.adminKey}` },
  });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("text/csv");
  const lines = (await res.text()).trim().split("\r\n");
  expect(lines[0]).toBe("code,batch_id,quota,amount,expires_at");
  const codes = lines.slice(1).map((line) => line.split(",")[0] as string);
  return { batch, codes };
}

/** Redeems a code through the API with a token: the status and the parsed body. */
export async function redeem(gw: TestGateway, key: string, code: string) {
  const res = await fetch(`${gw.url}/v1/redemptions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ code }),
  });
  return { status: res.status, body: (await res.json()) as any };
}
