import { type Static, Type } from "@sinclair/typebox";
import { OneOf } from "./common.js";

/**
 * One channel type as the admin API lists it: what it serves and which settings its calls read.
 * The gateway builds it with the capabilities core knows; the pages use the export below.
 */
export function channelTypeContract(capabilities: readonly string[]) {
  return Type.Object(
    {
      type: Type.String({ description: "the value of a channel's `type`", examples: ["openai-chat"] }),
      description: Type.String({ description: "what the type speaks" }),
      capabilities: Type.Array(OneOf(capabilities), {
        description:
          "what its channels serve: `content` (Gemini-native), `chat`, `images`, `tasks` (audio task families), `videos`",
      }),
      task_platforms: Type.Array(Type.String(), {
        description: "the task platforms (`audioa`, `audiob`, `video`) whose actions its task protocol does",
      }),
      settings: Type.Array(
        Type.Object(
          {
            name: Type.String({ description: "the name in a channel's `settings`", examples: ["timeout_ms"] }),
            description: Type.String(),
            schema: Type.Object({}, { additionalProperties: true, description: "its JSON schema (type and bounds)" }),
          },
          { additionalProperties: false },
        ),
        { description: "the channel settings its calls read" },
      ),
    },
    { additionalProperties: false },
  );
}

export const ChannelTypeView = channelTypeContract([]);
export type ChannelTypeView = Static<typeof ChannelTypeView>;
