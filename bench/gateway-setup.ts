/** What the gateway needs before load: a store, a user with quota, a token and a channel to the simulator. */
import pg from "pg";

/** A temporary PostgreSQL database; `drop` removes it (even with connections still open). */
export async function createTemporaryDatabase(serverUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `mg_bench_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const run = async (statement: string) => {
    const client = new pg.Client({ connectionString: serverUrl, connectionTimeoutMillis: 5000 });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await run(`create database "${name}"`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => run(`drop database if exists "${name}" with (force)`) };
}

async function admin(gatewayUrl: string, adminKey: string, method: string, path: string, body: unknown) {
  const res = await fetch(`${gatewayUrl}/api/admin${path}`, {
    method,
    headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as { data?: Record<string, unknown> };
  if (res.status !== 200 || !json.data)
    throw new Error(`admin ${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json.data;
}

/** Creates, through the admin API, a user with ample quota, its token and one gemini channel to the simulator. */
export async function provisionGateway(
  gatewayUrl: string,
  adminKey: string,
  simulator: { url: string; key: string },
  models: string[],
): Promise<{ token: string; userId: number }> {
  const user = await admin(gatewayUrl, adminKey, "POST", "/users", { name: "bench", quota: 1_000_000_000_000 });
  const token = await admin(gatewayUrl, adminKey, "POST", `/users/${user.id}/tokens`, { name: "bench" });
  await admin(gatewayUrl, adminKey, "POST", "/channels", {
    name: "simulator",
    type: "gemini",
    base_url: simulator.url,
    key: simulator.key,
    models,
  });
  return { token: token.key as string, userId: user.id as number };
}
