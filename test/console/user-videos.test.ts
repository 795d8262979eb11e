import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { simVideoFile } from "../../src/simulator/openai-videos-content.js";
import { startVideoEnv, untilEnded, type VideoEnv } from "../videos/harness.js";
import { ConsoleClient, createConsoleUser, TEST_PASSWORD_COST } from "./console-client.js";

/** The console's player: a user's videos listed and streamed with the session, never a token. */
describe("the console's video list and player", () => {
  let env: VideoEnv;
  let alice: ConsoleClient;
  let bob: ConsoleClient;
  let videoId: string;
  const source = { prompt: "a console kite", seconds: "4", size: "1280x720" } as const;

  beforeAll(async () => {
    env = await startVideoEnv("sqlite", { config: { console: { passwordCost: TEST_PASSWORD_COST } } });
    await createConsoleUser(env.gw, "alice", { quota: 50_000_000 });
    await createConsoleUser(env.gw, "bob", { quota: 1_000 });
    alice = new ConsoleClient(env.gw.url);
    bob = new ConsoleClient(env.gw.url, "127.0.0.2");
    expect((await alice.login("alice")).status).toBe(200);
    expect((await bob.login("bob")).status).toBe(200);
    const token = await alice.call("POST", "/console/api/me/playground-token");
    expect(token.status).toBe(200);
    const client = new OpenAI({ apiKey: token.body.key, baseURL: `${env.gw.url}/v1`, maxRetries: 0 });
    videoId = (await client.videos.create(source)).id;
    expect((await untilEnded(client, videoId)).status).toBe("completed");
  });
  afterAll(async () => {
    await env?.close();
  });

  it("lists the user's videos as video objects", async () => {
    const list = await alice.call("GET", "/console/api/me/videos?limit=5");
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ object: "list", has_more: false, first_id: videoId });
    expect(list.body.data[0]).toMatchObject({ id: videoId, status: "completed", seconds: "4", size: "1280x720" });
    expect((await bob.call("GET", "/console/api/me/videos")).body.data).toEqual([]);
    expect((await alice.call("GET", "/console/api/me/videos?limit=0")).status).toBe(400);
  });

  it("streams the stored files to the session's owner, with Range on the MP4", async () => {
    const base = `${env.gw.url}/console/api/me/videos/${videoId}/content`;
    const cookie = { cookie: alice.cookie as string };
    const whole = await fetch(base, { headers: cookie });
    expect(whole.status).toBe(200);
    expect(whole.headers.get("content-type")).toBe("video/mp4");
    expect(Buffer.from(await whole.arrayBuffer()).equals(simVideoFile(source, "video"))).toBe(true);
    const part = await fetch(base, { headers: { ...cookie, range: "bytes=4-11" } });
    expect(part.status).toBe(206);
    expect(Buffer.from(await part.arrayBuffer()).equals(simVideoFile(source, "video").subarray(4, 12))).toBe(true);
    const thumb = await fetch(`${base}?variant=thumbnail`, { headers: cookie });
    expect(thumb.headers.get("content-type")).toBe("image/png");
    expect(Buffer.from(await thumb.arrayBuffer()).equals(simVideoFile(source, "thumbnail"))).toBe(true);
  });

  it("answers 404 to another user, 401 without a session and 401 to a bearer key", async () => {
    const path = `/console/api/me/videos/${videoId}/content`;
    expect((await bob.call("GET", path)).status).toBe(404);
    expect((await new ConsoleClient(env.gw.url, "127.0.0.3").call("GET", path)).status).toBe(401);
    // A bearer token is not a console session.
    const res = await fetch(`${env.gw.url}${path}`, { headers: { authorization: `Bearer ${env.gw.adminKey}` } });
    expect(res.status).toBe(401);
  });
});
