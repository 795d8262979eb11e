import { settingSpecs } from "../core/channel-settings.js";
import type { VendorRegistry } from "../core/vendor-registry.js";
import type { ChannelTypeView } from "./channel-contracts.js";

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
