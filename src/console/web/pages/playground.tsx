// Users: a playground calling the gateway's own public endpoints with a short-lived token of
// theirs (POST /console/api/me/playground-token): an image, a music task, a content stream.
import { useEffect, useRef, useState } from "preact/hooks";
import { post } from "../api.js";
import { FormCard, useForm } from "../forms.js";
import { messageOf, Page, useAction } from "../ui.js";
import { MediaView } from "./record.js";

let cached: { key: string; expires_at: number } | null = null;

/** The playground token, asked for again a minute before it expires. */
async function playgroundKey(): Promise<string> {
  if (cached && cached.expires_at * 1000 - Date.now() > 60_000) return cached.key;
  cached = await post<{ key: string; expires_at: number }>("/console/api/me/playground-token");
  return cached.key;
}

async function callPublic(method: string, url: string, body?: unknown): Promise<Response> {
  const key = await playgroundKey();
  const res = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${key}`, "x-goog-api-key": key, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) {
    const text = await res.text();
    let message = `HTTP ${res.status}`;
    try {
      const j = JSON.parse(text);
      message = j?.error?.message ?? j?.message ?? message;
    } catch {}
    throw new Error(message);
  }
  return res;
}

function useModels(): string[] {
  const [models, setModels] = useState<string[]>([]);
  useEffect(() => {
    callPublic("GET", "/v1/models").then(
      (r) => r.json().then((j: { data?: Array<{ id: string }> }) => setModels((j.data ?? []).map((m) => m.id))),
      () => {},
    );
  }, []);
  return models;
}

export function PlaygroundPage() {
  const models = useModels();
  return (
    <Page title="Playground">
      <p class="muted">Runs on your balance, through the same public endpoints your applications call.</p>
      <datalist id="model-names">
        {models.map((m) => (
          <option key={m} value={m} />
        ))}
      </datalist>
      {/* The stream first, its text in a box of fixed height: what grows as results arrive (an
          image, a song's status and players) is at the page's end, so nothing below it moves. */}
      <StreamCard />
      <div class="grid2">
        <ImageCard />
        <MusicCard />
      </div>
    </Page>
  );
}

function ImageCard() {
  const form = useForm({ model: "image-model-2-1k", prompt: "" });
  const { values } = form;
  const [images, setImages] = useState<string[]>([]);
  const action = useAction();
  const run = () => {
    if (!values.prompt.trim()) return action.setError("prompt: describe the image");
    void action.run(async () => {
      const res = await callPublic("POST", "/v1/images/generations", {
        model: values.model.trim(),
        prompt: values.prompt.trim(),
        n: 1,
      });
      const j = (await res.json()) as { data?: Array<{ url?: string; b64_json?: string }> };
      setImages((j.data ?? []).map((d) => d.url ?? `data:image/png;base64,${d.b64_json ?? ""}`));
    });
  };
  return (
    <FormCard
      title="Image"
      layout="stack"
      alone
      fields={[
        { field: "model", label: "Image model", name: "image-model", list: "model-names" },
        { field: "prompt", kind: "area", label: "Image prompt", name: "image-prompt", rows: 3 },
      ]}
      submit={action.busy ? "Generating…" : "Generate image"}
      form={form}
      action={action}
      onSubmit={run}
      after={
        <div class="media" data-testid="playground-images">
          {images.map((src) => (
            <img key={src} src={src} alt={`Generated from: ${values.prompt}`} width={256} height={256} />
          ))}
        </div>
      }
    />
  );
}

function MusicCard() {
  const form = useForm({ prompt: "", mv: "chirp-v3-5" });
  const [task, setTask] = useState<Record<string, unknown> | null>(null);
  const [error, setError] = useState<string | null>(null);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  useEffect(() => () => void (timer.current && clearTimeout(timer.current)), []);
  const poll = async (id: string) => {
    try {
      const res = await callPublic("GET", `/audioa/fetch/${encodeURIComponent(id)}`);
      const j = (await res.json()) as { data?: Record<string, unknown> };
      setTask(j.data ?? null);
      const status = String(j.data?.status ?? "");
      if (status !== "SUCCESS" && status !== "FAILURE") timer.current = setTimeout(() => void poll(id), 2000);
    } catch (err) {
      setError(messageOf(err));
    }
  };
  const run = async () => {
    const { prompt, mv } = form.values;
    if (!prompt.trim()) return setError("prompt: describe the song");
    setError(null);
    setTask(null);
    try {
      const res = await callPublic("POST", "/audioa/submit/MUSIC", { gpt_description_prompt: prompt.trim(), mv });
      const j = (await res.json()) as { data?: string };
      if (typeof j.data !== "string") throw new Error("The submit answered no task id.");
      setTask({ task_id: j.data, status: "NOT_START" });
      void poll(j.data);
    } catch (err) {
      setError(messageOf(err));
    }
  };
  return (
    <FormCard
      title="Music task"
      layout="stack"
      alone
      fields={[
        { field: "prompt", kind: "area", label: "Song description", name: "music-prompt", rows: 3 },
        {
          field: "mv",
          kind: "select",
          label: "Model version",
          options: [
            ["chirp-v3-5", "chirp-v3-5"],
            ["chirp-v4", "chirp-v4"],
          ],
        },
      ]}
      submit="Submit music task"
      form={form}
      action={{ error }}
      onSubmit={() => void run()}
      after={
        task ? (
          <div aria-live="polite">
            <p>
              <span class="mono">{String(task.task_id ?? "")}</span>: {String(task.status ?? "")}{" "}
              {String(task.progress ?? "")}
            </p>
            <MediaView record={task} />
          </div>
        ) : null
      }
    />
  );
}

function StreamCard() {
  const form = useForm({ api: "gemini", model: "gemini-2.5-flash", prompt: "" });
  const [text, setText] = useState("");
  const action = useAction();
  const run = () => {
    const { api, model, prompt } = form.values;
    if (!prompt.trim()) return action.setError("prompt: say something");
    setText("");
    void action.run(async () => {
      const res =
        api === "openai"
          ? await callPublic("POST", "/v1/chat/completions", {
              model: model.trim(),
              stream: true,
              messages: [{ role: "user", content: prompt }],
            })
          : await callPublic(
              "POST",
              `/v1beta/models/${encodeURIComponent(model.trim())}:streamGenerateContent?alt=sse`,
              {
                contents: [{ role: "user", parts: [{ text: prompt }] }],
              },
            );
      await readEvents(res, (data) => {
        const j = JSON.parse(data);
        const piece =
          api === "openai"
            ? (j.choices?.[0]?.delta?.content ?? "")
            : (j.candidates?.[0]?.content?.parts ?? []).map((p: { text?: string }) => p.text ?? "").join("");
        if (piece) setText((t) => t + piece);
      });
    });
  };
  return (
    <FormCard
      title="Content stream"
      fields={[
        {
          field: "api",
          kind: "select",
          label: "API",
          options: [
            ["openai", "OpenAI chat"],
            ["gemini", "Gemini content"],
          ],
        },
        { field: "model", label: "Content model", name: "content-model", list: "model-names" },
        { field: "prompt", kind: "area", label: "Message", name: "content-prompt", rows: 3 },
      ]}
      submit={action.busy ? "Streaming…" : "Send"}
      form={form}
      action={action}
      onSubmit={run}
      after={
        <output class="stream" aria-live="polite" data-testid="stream-output">
          {text}
        </output>
      }
    />
  );
}

/** Reads a text/event-stream answer, calling onData with each `data:` payload but [DONE]. */
async function readEvents(res: Response, onData: (data: string) => void): Promise<void> {
  const reader = res.body?.pipeThrough(new TextDecoderStream()).getReader();
  if (!reader) return;
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let cut = buffer.indexOf("\n");
    while (cut >= 0) {
      const line = buffer.slice(0, cut).trim();
      buffer = buffer.slice(cut + 1);
      if (line.startsWith("data:")) {
        const data = line.slice(5).trim();
        if (data && data !== "[DONE]") onData(data);
      }
      cut = buffer.indexOf("\n");
    }
  }
}
