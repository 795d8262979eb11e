import { FAMILY_SPECS, type TaskPlatform } from "./tasks/families.js";
import { CAPABILITIES, type Capability, type VendorAdapter } from "./vendor-adapter.js";

/**
 * The vendors the gateway speaks to, looked up by channel type and by what they serve. Built once
 * from the one list (upstreams/registry.ts); every "which types serve chat" is asked here.
 */
export class VendorRegistry {
  private readonly byType = new Map<string, VendorAdapter>();
  private readonly byCapability = new Map<Capability, string[]>();

  constructor(readonly adapters: readonly VendorAdapter[]) {
    for (const adapter of adapters) {
      if (this.byType.has(adapter.type)) throw new Error(`channel type ${adapter.type} is registered twice`);
      this.byType.set(adapter.type, adapter);
    }
    for (const capability of CAPABILITIES) {
      this.byCapability.set(
        capability,
        adapters.filter((a) => this.capabilitiesOf(a).includes(capability)).map((a) => a.type),
      );
    }
  }

  /** Every channel type, in the registry's order. */
  get types(): string[] {
    return this.adapters.map((a) => a.type);
  }

  /** The adapter of a channel type; undefined for a type no vendor has. */
  of(type: string): VendorAdapter | undefined {
    return this.byType.get(type);
  }

  /** The channel types that serve a capability. */
  serving(capability: Capability): readonly string[] {
    return this.byCapability.get(capability) ?? [];
  }

  /** The channel types whose task protocol can do a kind (`family:ACTION`). */
  doing(kind: string): string[] {
    return this.adapters.filter((a) => a.tasks?.kinds.includes(kind)).map((a) => a.type);
  }

  /** The task platforms (`audioa`, `video`...) whose kinds an adapter's task protocol does. */
  platformsOf(adapter: VendorAdapter): TaskPlatform[] {
    const platforms = new Set<TaskPlatform>();
    for (const kind of adapter.tasks?.kinds ?? []) {
      const platform = kind.slice(0, kind.indexOf(":"));
      if (Object.hasOwn(FAMILY_SPECS, platform)) platforms.add(platform as TaskPlatform);
    }
    return [...platforms];
  }

  /** What an adapter serves, in the order of CAPABILITIES. */
  capabilitiesOf(adapter: VendorAdapter): Capability[] {
    const served = new Set<Capability>();
    if (adapter.content) served.add("content");
    if (adapter.chat) served.add("chat");
    if (adapter.images) served.add("images");
    if (adapter.embeddings) served.add("embeddings");
    for (const platform of this.platformsOf(adapter)) served.add(FAMILY_SPECS[platform].capability);
    return CAPABILITIES.filter((c) => served.has(c));
  }
}
