/** What the gateway needs before load: a store, a user with quota, a token and channels to the upstream. */
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

/** The models the gateway serves from the upstream, by channel type. */
export interface BenchCatalog {
  /** Served by a `gemini` channel. */
  gemini: string[];
  /** Served by an `openai-chat` channel. */
  chat: string[];
  /** Content models without a default price: they get one (the price of gemini-2.5-flash). */
  priced: string[];
}

/**
 * Creates, through the admin API, `users` users with ample quota (one by default: a single hot
 * user), a token for each, one `gemini` and one `openai-chat` channel to the upstream, and the
 * prices of the bench's own model names. The first user and token are the one-user set-up's.
 */
export async function provisionGateway(
  gatewayUrl: string,
  adminKey: string,
  upstream: { url: string; key: string },
  catalog: BenchCatalog,
  users = 1,
): Promise<{ token: string; userId: number; tokens: string[]; userIds: number[] }> {
  const tokens: string[] = [];
  const userIds: number[] = [];
  for (let i = 0; i < users; i++) {
    const name = i === 0 ? "bench" : `bench-${i + 1}`;
    const user = await admin(gatewayUrl, adminKey, "POST", "/users", { name, quota: 1_000_000_000_000 });
    const token = await admin(gatewayUrl, adminKey, "POST", `/users/${user.id}/tokens`, { name });
    tokens.push(token.key as string);
    userIds.push(user.id as number);
  }
  for (const name of catalog.priced) {
    await admin(gatewayUrl, adminKey, "PUT", "/prices", {
      kind: "content",
      name,
      input_per_million: 0.3,
      output_per_million: 2.5,
      cached_ratio: 0.1,
    });
  }
  const channel = (name: string, type: string, models: string[]) =>
    admin(gatewayUrl, adminKey, "POST", "/channels", { name, type, base_url: upstream.url, key: upstream.key, models });
  await channel("upstream gemini", "gemini", catalog.gemini);
  if (catalog.chat.length > 0) await channel("upstream openai-chat", "openai-chat", catalog.chat);
  return { token: tokens[0] as string, userId: userIds[0] as number, tokens, userIds };
}
