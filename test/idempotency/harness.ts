import type { TestGateway } from "../support/gateway.js";

export interface Answer {
  status: number;
  headers: Headers;
  body: any;
}

/** A POST with a bearer token, a JSON body and optional extra headers (Idempotency-Key...). */
export async function post(
  url: string,
  key: string,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const res = await fetch(`${url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
}

/** The charges the ledger holds for a user (top-ups, refunds and settlements left out). */
export async function chargesOf(gw: TestGateway, userId: number) {
  const rows = await gw.gateway.ctx.ledger.entries(userId, { limit: 1000 });
  return rows.filter((r) => r.kind === "charge").map((r) => ({ reference: r.reference, amount: Number(r.amount) }));
}

/** The user's tasks as the admin API lists them. */
export async function tasksOf(gw: TestGateway, userId: number): Promise<any[]> {
  const res = await gw.admin("GET", `/tasks?user_id=${userId}&limit=1000`);
  if (res.status !== 200) throw new Error(`admin tasks: ${JSON.stringify(res.body)}`);
  return res.body.data;
}
