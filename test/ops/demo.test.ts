import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";

/** Splits a shell line of single-quoted words (as the demo prints them) into words. */
function shellWords(line: string): string[] {
  const words: string[] = [];
  const re = /'((?:[^']|'\\'')*)'|(\S+)/g;
  for (const m of line.matchAll(re)) words.push(m[1] !== undefined ? m[1].replaceAll("'\\''", "'") : (m[2] ?? ""));
  return words;
}

/** The request a printed curl line describes. */
function curlToRequest(line: string) {
  const words = shellWords(line);
  let method = "GET";
  let url = "";
  let body: string | undefined;
  let output: string | undefined;
  const headers: Record<string, string> = {};
  for (let i = 1; i < words.length; i++) {
    const w = words[i] ?? "";
    if (w === "-X") method = words[++i] ?? "GET";
    else if (w === "-H") {
      const [k, ...v] = (words[++i] ?? "").split(":");
      headers[(k ?? "").trim().toLowerCase()] = v.join(":").trim();
    } else if (w === "-d") body = words[++i];
    else if (w === "-o") output = words[++i];
    else if (!w.startsWith("-")) url = w;
  }
  return { method, url, headers, body, output };
}

describe("demo", () => {
  it("starts in one command and every printed curl line succeeds with the printed token", async () => {
    const child = spawn(process.execPath, ["bin/media-gateway.mjs", "demo", "--port", "0"], {
      env: { ...process.env, LOG_LEVEL: "warn", DATABASE_URL: "", REDIS_URL: "" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (c) => {
      out += c;
    });
    child.stderr.on("data", (c) => {
      err += c;
    });
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setInterval(() => {
          if (out.includes("demo ready")) {
            clearInterval(timer);
            resolve();
          }
        }, 50);
        void exited.then(() => {
          clearInterval(timer);
          reject(new Error(`demo exited early: ${err}`));
        });
      });
      const token = /token: (sk-\S+)/.exec(out)?.[1];
      expect(token).toMatch(/^sk-[0-9A-Za-z]{48}$/);
      const adminKey = /admin key: (adm-\S+)/.exec(out)?.[1];
      expect(adminKey).toMatch(/^adm-[0-9A-Za-z]{48}$/);
      const lines = out.split("\n").filter((l) => l.startsWith("curl "));
      // Task submit and fetch for both families, images, content and a stream.
      expect(lines.length).toBeGreaterThanOrEqual(8);
      const covered = new Set<string>();
      for (const line of lines) {
        const path = new URL(curlToRequest(line).url).pathname;
        expect(line).toContain(path.startsWith("/api/admin/") ? (adminKey as string) : (token as string));
        const req = curlToRequest(line);
        const res = await fetch(req.url, { method: req.method, headers: req.headers, body: req.body });
        if (path.endsWith("/content")) {
          // The video's bytes go to a file (-o), not the terminal: a real MP4 of the gateway's copy.
          expect(req.output).toBe("demo-video.mp4");
          expect(res.status, line).toBe(200);
          expect(res.headers.get("content-type")).toBe("video/mp4");
          const video = Buffer.from(await res.arrayBuffer());
          expect(video.toString("ascii", 4, 8)).toBe("ftyp");
          expect(video.includes(Buffer.from("avcC"))).toBe(true);
          covered.add("/v1/videos/{id}/content");
          continue;
        }
        const text = await res.text();
        expect(res.status, `${line}\n${text}`).toBe(200);
        const body = req.body ? JSON.parse(req.body) : {};
        covered.add(`${path.replace(/(task|video)_\w+/, "{id}")}${body.stream ? " (stream)" : ""}`);
        if (path.endsWith(":streamGenerateContent")) {
          // -N: curl shows each event as it arrives.
          expect(line).toMatch(/^curl -sS -N /);
          expect(res.headers.get("content-type")).toContain("text/event-stream");
          expect(text).toMatch(/^data: \{/);
        } else if (path === "/api/admin/users") {
          expect(text).toContain('"demo"');
        } else if (path === "/v1/chat/completions" && body.stream) {
          expect(text).toMatch(/^data: \{/);
          expect(text).toContain('"usage":{"prompt_tokens"');
          expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);
        } else if (path === "/v1/chat/completions") {
          expect(JSON.parse(text).choices[0].message.content.length).toBeGreaterThan(0);
        } else if (path === "/v1/messages" && body.stream) {
          expect(text).toMatch(/^event: message_start\n/);
          expect(text).toContain("event: content_block_delta");
          expect(text.trimEnd().endsWith('data: {"type":"message_stop"}')).toBe(true);
        } else if (path === "/v1/messages") {
          expect(JSON.parse(text).content[0].text.length).toBeGreaterThan(0);
        } else if (path === "/v1/messages/count_tokens") {
          expect(JSON.parse(text).input_tokens).toBeGreaterThan(0);
        } else if (path.endsWith(":countTokens")) {
          expect(JSON.parse(text).totalTokens).toBeGreaterThan(0);
        } else if (path === "/v1/embeddings") {
          const answer = JSON.parse(text);
          expect(answer.data.map((d: { embedding: number[] }) => d.embedding.length)).toEqual([8, 8]);
          expect(answer.usage.prompt_tokens).toBeGreaterThan(0);
        } else if (path.endsWith(":embedContent")) {
          expect(JSON.parse(text).embedding.values).toHaveLength(8);
        } else if (path === "/v1/models") {
          expect(JSON.parse(text).data.map((m: { id: string }) => m.id)).toContain("demo-gpt");
        } else if (path === "/v1beta/models") {
          expect(JSON.parse(text).models.length).toBeGreaterThan(0);
        } else if (path.startsWith("/audio")) {
          expect(JSON.parse(text).code).toBe("success");
        } else if (path === "/v1/videos") {
          expect(JSON.parse(text)).toMatchObject({ object: "video", model: "sora-2", seconds: "4" });
          expect(JSON.parse(text).id).toMatch(/^video_/);
        } else if (path.startsWith("/v1/videos/")) {
          expect(JSON.parse(text)).toMatchObject({ object: "video", status: "completed", progress: 100 });
        } else if (path === "/v1/images/generations") {
          const url = JSON.parse(text).data[0].url as string;
          const image = await fetch(url);
          expect(image.headers.get("content-type")).toBe("image/png");
        } else {
          expect(JSON.parse(text).candidates[0].content.parts[0].text.length).toBeGreaterThan(0);
        }
      }
      expect(covered).toEqual(
        new Set([
          "/audioa/submit/MUSIC",
          "/audioa/fetch/{id}",
          "/audioa/fetch",
          "/audioa/submit/LYRICS",
          "/audioa/submit/EXTEND",
          "/audiob/submit/MUSIC",
          "/audiob/fetch",
          "/v1/images/generations",
          "/v1beta/models/gemini-2.5-flash:generateContent",
          "/v1beta/models/gemini-2.5-flash:streamGenerateContent",
          "/v1beta/models/gemini-2.5-flash:countTokens",
          "/v1beta/models",
          "/v1/chat/completions",
          "/v1/chat/completions (stream)",
          "/v1/messages",
          "/v1/messages (stream)",
          "/v1/messages/count_tokens",
          "/v1/embeddings",
          "/v1beta/models/gemini-embedding-001:embedContent",
          "/v1/videos",
          "/v1/videos/{id}",
          "/v1/videos/{id}/content",
          "/v1/models",
          "/api/admin/users",
        ]),
      );
    } finally {
      child.kill("SIGINT");
    }
    expect(await exited).toBe(0);
  });
});
