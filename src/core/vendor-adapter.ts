import type { Channel } from "./channel.js";
import type { ChannelSettingName } from "./channel-settings.js";
import type { ChatUpstream } from "./chat/ports.js";
import type { ContentUpstream } from "./content/ports.js";
import type { EmbeddingsUpstream } from "./embeddings/ports.js";
import type { ImageUpstream } from "./images/image-upstream.js";
import type { TaskUpstream } from "./tasks/ports.js";

/**
 * What a channel type can be used for: the Gemini-native content surface, the chat surfaces,
 * image generation, the audio task families, the Videos API and embeddings.
 */
export const CAPABILITIES = ["content", "chat", "images", "tasks", "videos", "embeddings"] as const;
export type Capability = (typeof CAPABILITIES)[number];

/** A cheap request that tells whether a channel's upstream answers and accepts its key. */
export interface ProbeCall {
  method: "GET" | "POST";
  url: string;
  headers: Record<string, string>;
  json?: unknown;
}

/**
 * One vendor (one channel type) as the gateway uses it: the adapters of the protocols it speaks,
 * each serving one capability, the settings its calls read, and its probe. Every vendor folder
 * under upstreams/ exports one; upstreams/registry.ts lists them, and everything that asks which
 * types serve what asks that list.
 */
export interface VendorAdapter {
  /** The channel type, as a channel's `type` names it. */
  readonly type: string;
  /** One line for operators: what the type speaks. */
  readonly description: string;
  /** The Gemini-native content relay (`/v1beta/models/...`). */
  readonly content?: ContentUpstream<Channel>;
  /** The chat relay (OpenAI's and Anthropic's chat surfaces). */
  readonly chat?: ChatUpstream<Channel>;
  /** Image generation (`/v1/images/generations`). */
  readonly images?: ImageUpstream<Channel>;
  /** Embeddings (`/v1/embeddings`, Gemini's `:embedContent` and `:batchEmbedContents`). */
  readonly embeddings?: EmbeddingsUpstream<Channel>;
  /**
   * A task protocol; the kinds it names say what it serves: an audio family's kinds make it
   * serve `tasks`, the video platform's `videos`.
   */
  readonly tasks?: TaskUpstream;
  /** The channel settings its calls read (`CALL_SETTINGS` and any of its own). */
  readonly settings: readonly ChannelSettingName[];
  /** The call that tests a channel of this type (the operator's test and the recovery probe). */
  probe(channel: Channel): ProbeCall;
}
