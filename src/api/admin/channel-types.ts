import { type Static, Type } from "@sinclair/typebox";
import { settingSpecs } from "../../core/channel-settings.js";
import { CAPABILITIES } from "../../core/vendor-adapter.js";
import type { VendorRegistry } from "../../core/vendor-registry.js";

/** One channel type as the admin API lists it: what it serves and which settings its calls read. */
export const ChannelTypeView = Type.Object(
  {
    type: Type.String({ description: "the value of a channel's `type`", examples: ["openai-chat"] }),
    description: Type.String({ description: "what the type speaks" }),
    capabilities: Type.Array(Type.Union(CAPABILITIES.map((c) => Type.Literal(c))), {
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
export type ChannelTypeView = Static<typeof ChannelTypeView>;

/** Every channel type of the registry, in its order. */
export function channelTypeViews(registry: Pick<VendorRegistry, "adapters" | "capabilitiesOf" | "platformsOf">) {
  return registry.adapters.map(
    (adapter): ChannelTypeView => ({
      type: adapter.type,
      description: adapter.description,
      capabilities: registry.capabilitiesOf(adapter),
      task_platforms: registry.platformsOf(adapter),
      settings: settingSpecs(adapter.settings).map((s) => ({
        name: s.name,
        description: typeof s.schema.description === "string" ? s.schema.description : "",
        schema: s.schema,
      })),
    }),
  );
}
