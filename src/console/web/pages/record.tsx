// A record shown whole: every field as a definition list (times as dates, nested values as
// indented JSON across the full width), and the media a record names, with players.

/** Fields holding Unix seconds, and the one holding Unix milliseconds. */
const SECONDS = /(_time|_at)$/;
const MILLIS = new Set(["next_poll_at", "next_attempt_at"]);

function shown(key: string, v: unknown): string {
  if (v === null || v === "" || v === undefined) return "—";
  if (typeof v === "number" && v > 0 && (SECONDS.test(key) || MILLIS.has(key))) {
    const ms = MILLIS.has(key) || v > 1e11 ? v : v * 1000;
    return `${new Date(ms).toISOString().replace("T", " ").slice(0, 19)} UTC`;
  }
  return typeof v === "object" ? JSON.stringify(v, null, 2) : String(v);
}

/** Every field of a record as a definition list; nested values as JSON. */
export function RecordList({ record }: { record: Record<string, unknown> | null }) {
  if (!record) return <p>Loading…</p>;
  return (
    <dl class="record">
      {Object.entries(record).map(([k, v]) =>
        v !== null && typeof v === "object" ? (
          <div key={k} class="whole">
            <dt>{k}</dt>
            <dd>
              <pre class="mono">{shown(k, v)}</pre>
            </dd>
          </div>
        ) : (
          <div key={k}>
            <dt>{k}</dt>
            <dd class="mono">{shown(k, v)}</dd>
          </div>
        ),
      )}
    </dl>
  );
}

type MediaKind = "audio" | "video" | "image";

/** Every URL in a record that a player or an image can show, by the key's name or the file's ending. */
export function mediaOf(value: unknown, found = new Map<string, MediaKind>(), key = ""): Map<string, MediaKind> {
  if (typeof value === "string") {
    if (!/^(https?:|\/|data:|blob:)/.test(value)) return found;
    const k = key.toLowerCase();
    const ext = value.split("?")[0]?.split(".").pop()?.toLowerCase() ?? "";
    if (k.includes("video") || ["mp4", "webm", "mov"].includes(ext) || value.startsWith("data:video"))
      found.set(value, "video");
    else if (
      k.includes("audio") ||
      ["mp3", "wav", "ogg", "m4a", "flac"].includes(ext) ||
      value.startsWith("data:audio")
    )
      found.set(value, "audio");
    else if (
      k.includes("image") ||
      ["png", "jpg", "jpeg", "webp", "gif"].includes(ext) ||
      value.startsWith("data:image")
    )
      found.set(value, "image");
  } else if (Array.isArray(value)) {
    for (const v of value) mediaOf(v, found, key);
  } else if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) mediaOf(v, found, k);
  }
  return found;
}

export function MediaView({ record, compact = false }: { record: unknown; compact?: boolean }) {
  const media = [...mediaOf(record)];
  if (media.length === 0) return compact ? <span class="muted">—</span> : <p class="muted">No media in this record.</p>;
  return (
    <div class={compact ? "media compact" : "media"}>
      {media.slice(0, compact ? 1 : 12).map(([url, kind]) =>
        kind === "video" ? (
          // biome-ignore lint/a11y/useMediaCaption: generated media has no captions
          <video
            key={url}
            src={url}
            controls
            preload="metadata"
            width={compact ? 120 : 320}
            height={compact ? 68 : 180}
          />
        ) : kind === "audio" ? (
          // biome-ignore lint/a11y/useMediaCaption: generated media has no captions
          <audio key={url} src={url} controls preload="none" />
        ) : (
          <img
            key={url}
            src={url}
            alt="A generated result"
            loading="lazy"
            width={compact ? 64 : 256}
            height={compact ? 64 : 256}
          />
        ),
      )}
    </div>
  );
}
