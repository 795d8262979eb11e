import type { Channel } from "../../core/channel.js";
import type { VideoBody } from "../../core/tasks/kinds/video-body.js";
import { type OutgoingTask, type PolledTask, pollOneByOne, type TaskUpstream } from "../../core/tasks/ports.js";
import type { UpstreamTaskState } from "../../core/tasks/upstream-state.js";
import { UpstreamError } from "../../core/upstream-error.js";
import { createUpstreamVideo, remixUpstreamVideo, retrieveUpstreamVideo } from "./api.js";
import { DEFAULT_POLLS_PER_SECOND, PollPace } from "./poll-pace.js";
import { videoTaskState } from "./state.js";

/** Longest a poll waits for its channel's next poll moment before it is put off. */
const MAX_PACE_WAIT_MS = 2_000;

const pace = new PollPace();

async function submitVideo(channel: Channel, task: OutgoingTask, signal: AbortSignal): Promise<string> {
  const body = task.body as unknown as VideoBody;
  if (task.kind.action === "REMIX") {
    if (!task.continues) throw new UpstreamError("refused", "a remix names no source video");
    return (await remixUpstreamVideo(channel, task.continues, body.prompt, signal)).id;
  }
  const fields = { prompt: body.prompt, model: task.upstreamModel, seconds: body.seconds, size: body.size };
  return (await createUpstreamVideo(channel, fields, task.attachment, signal)).id;
}

/** Polls one video, at the channel's poll rate; null when the upstream does not know it. */
async function pollVideo(channel: Channel, task: PolledTask, signal?: AbortSignal): Promise<UpstreamTaskState | null> {
  const perSecond = channel.settings.pollsPerSecond ?? DEFAULT_POLLS_PER_SECOND;
  if (!(await pace.take(channel.id, perSecond, MAX_PACE_WAIT_MS))) {
    throw new UpstreamError("retryable", "the channel's poll rate is used up for now", { channelAtFault: false });
  }
  const video = await retrieveUpstreamVideo(channel, task.upstreamId, signal);
  return video ? videoTaskState(channel, video, Date.now()) : null;
}

/**
 * The OpenAI Videos API (`{base_url}/v1/videos`, Bearer key) as a task adapter: create (JSON, or
 * multipart with a reference image) and remix; polled one GET per video (the API has no batch
 * read) at the channel's `settings.pollsPerSecond`. Content sits behind the key.
 */
export const openAiVideoTasks: TaskUpstream = {
  kinds: ["video:CREATE", "video:REMIX"],
  minPollIntervalMs: 0,
  defaultConcurrency: 8,
  resultsNeedKey: true,
  batchSize: () => 1,
  submit: submitVideo,
  poll: pollOneByOne(pollVideo),
};
