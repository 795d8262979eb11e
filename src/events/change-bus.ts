import { EventEmitter } from "node:events";

/** What changed: caches of that kind must be dropped. */
export type ChangeTopic = "tokens" | "users" | "channels" | "prices" | "limits";

/**
 * Tells every part of the gateway (and, with a shared implementation, every instance) that
 * operator data changed, so caches drop it. The in-process bus serves one instance.
 */
export interface ChangeBus {
  publish(topic: ChangeTopic): Promise<void>;
  subscribe(listener: (topic: ChangeTopic) => void): () => void;
  close(): Promise<void>;
}

export class LocalChangeBus implements ChangeBus {
  private readonly emitter = new EventEmitter();

  async publish(topic: ChangeTopic): Promise<void> {
    this.emitter.emit("change", topic);
  }

  subscribe(listener: (topic: ChangeTopic) => void): () => void {
    this.emitter.on("change", listener);
    return () => this.emitter.off("change", listener);
  }

  async close(): Promise<void> {
    this.emitter.removeAllListeners();
  }
}
