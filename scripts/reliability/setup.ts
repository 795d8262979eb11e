import type { MediaUser } from "./media-phase.js";
import { RUN_PRICES } from "./money-report.js";
import { freePort } from "./processes.js";
import { VIDEO_MODEL } from "./video-phase.js";

type Admin = (method: string, urlPath: string, body?: unknown) => Promise<any>;

/**
 * Sets what the run's money is computed from, through the admin API: every price it uses, a dearer
 * group, channel ratios, the channels on the simulator (and one on a closed port; videos too), and the users:
 * ten for tasks, media users (four plain, two in the dearer group, two with a small balance and a
 * credit line), and one for the fuzz pass.
 */
export async function setUpCatalog(
  admin: Admin,
  simUrl: string,
  simKey: string,
  o: { vipRatio: number; channelRatio: { content: number; image: number } },
) {
  const groups = ["default", "vip"];
  await admin("PUT", "/group-ratios/vip", { ratio: o.vipRatio });
  for (const [name, price] of Object.entries(RUN_PRICES.perCall)) {
    const [kind, priceName] = name.includes(":") ? ["task", name] : ["image", name];
    await admin("PUT", "/prices", { kind, name: priceName, price });
  }
  for (const [name, p] of Object.entries(RUN_PRICES.tokens)) {
    await admin("PUT", "/prices", {
      kind: "content",
      name,
      input_per_million: p.input,
      output_per_million: p.output,
      cached_ratio: p.cachedRatio,
    });
  }
  const closedPort = await freePort();
  const channel = (body: Record<string, unknown>) => admin("POST", "/channels", { key: simKey, groups, ...body });
  await channel({ name: "relay", type: "task-relay", base_url: simUrl, models: ["audioa"], weight: 9 });
  const dead = await channel({
    name: "relay-closed-port",
    type: "task-relay",
    base_url: `http://127.0.0.1:${closedPort}`,
    models: ["audioa"],
    weight: 1,
    settings: { connect_timeout_ms: 500 },
  });
  await channel({ name: "record", type: "generate-record", base_url: simUrl, models: ["audiob"] });
  await channel({
    name: "content",
    type: "gemini",
    base_url: simUrl,
    models: Object.keys(RUN_PRICES.tokens),
    price_ratio: o.channelRatio.content,
  });
  await channel({
    name: "images",
    type: "openai-images",
    base_url: simUrl,
    models: ["image-model"],
    price_ratio: o.channelRatio.image,
  });

  await channel({ name: "videos", type: "openai-videos", base_url: simUrl, models: [VIDEO_MODEL] });

  const initial = new Map<number, number>();
  const newUser = async (name: string, quota: number, extra: Record<string, unknown> = {}) => {
    const user = await admin("POST", "/users", { name, quota, ...extra });
    const token = await admin("POST", `/users/${user.id}/tokens`, { name: "default" });
    initial.set(user.id, quota);
    return { id: user.id as number, key: token.key as string };
  };
  const taskUsers: Array<{ id: number; key: string }> = [];
  for (let i = 0; i < 10; i++) taskUsers.push(await newUser(`tenant-${i}`, 100_000_000));
  // Media users: four plain, two in a dearer group, two with a small balance and a credit line.
  const mediaUsers: MediaUser[] = [];
  for (let i = 0; i < 4; i++) mediaUsers.push({ ...(await newUser(`media-${i}`, 20_000_000)), groupRatio: 1 });
  for (let i = 0; i < 2; i++) {
    const u = await newUser(`vip-${i}`, 20_000_000, { group: "vip" });
    mediaUsers.push({ ...u, groupRatio: o.vipRatio });
  }
  for (let i = 0; i < 2; i++) {
    const u = await newUser(`small-${i}`, 1_000, { credit_line: 5_000 });
    mediaUsers.push({ ...u, groupRatio: 1, small: true });
  }
  const fuzzUser = await admin("POST", "/users", { name: "fuzz", quota: 2_000_000_000 });
  const fuzzToken = await admin("POST", `/users/${fuzzUser.id}/tokens`, { name: "fuzz" });

  return { dead, initial, taskUsers, mediaUsers, fuzzToken };
}
