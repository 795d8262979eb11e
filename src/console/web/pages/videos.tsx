// Users: their videos, played from the gateway's stored copies with the console session.
import { get, query } from "../api.js";
import { Gallery, usePager } from "../lists.js";
import { fmtTime, Notice, Page, useLoad } from "../ui.js";

interface Video {
  id: string;
  status: "queued" | "in_progress" | "completed" | "failed";
  progress: number;
  model: string;
  prompt: string | null;
  seconds: string;
  size: string;
  created_at: number;
  expires_at: number | null;
  error: { message: string } | null;
}

interface VideoList {
  data: Video[];
  last_id: string | null;
  has_more: boolean;
}

const PAGE = 12;

function contentUrl(id: string, variant: "video" | "thumbnail"): string {
  return `/console/api/me/videos/${encodeURIComponent(id)}/content${variant === "video" ? "" : "?variant=thumbnail"}`;
}

function VideoCard({ video }: { video: Video }) {
  const expired = video.expires_at !== null && video.expires_at * 1000 <= Date.now();
  const label = video.prompt ?? video.id;
  return (
    <figure>
      {video.status === "completed" && !expired ? (
        // biome-ignore lint/a11y/useMediaCaption: generated videos carry no sound to caption
        <video
          controls
          preload="none"
          width={200}
          height={200}
          poster={contentUrl(video.id, "thumbnail")}
          src={contentUrl(video.id, "video")}
          aria-label={`Video: ${label}`}
        />
      ) : (
        <div class="video-placeholder" role="img" aria-label={`Video ${video.status}: ${label}`}>
          {expired ? "expired" : video.status === "failed" ? "failed" : `${video.status} · ${video.progress}%`}
        </div>
      )}
      <figcaption>
        <span class="mono">{video.id}</span>
        <br />
        {video.model} · {video.seconds}s · {video.size} · {fmtTime(video.created_at)}
        {video.error ? ` · ${video.error.message}` : null}
      </figcaption>
    </figure>
  );
}

export function MyVideosPage() {
  const pager = usePager();
  const rows = useLoad(
    () => get<VideoList>(`/console/api/me/videos${query({ after: pager.after, limit: PAGE })}`),
    [pager.after],
  );
  const list = rows.data?.data ?? null;
  const next = rows.data?.has_more ? rows.data.last_id : null;
  return (
    <Page title="My videos">
      <Notice error={rows.error} />
      <Gallery
        label="My videos"
        rows={list}
        empty="No videos yet: create one through /v1/videos with one of your tokens."
        keyOf={(v) => v.id}
        item={(v) => <VideoCard video={v} />}
        pager={pager}
        next={next}
      />
    </Page>
  );
}
