/** The highest RSS of each process while loads run, sampled from /proc every 200 ms. */
import { memoryOf, type RunningChild } from "./processes.js";

export class MemorySampler {
  private readonly highest = new Map<string, number>();

  /** Runs `work` while sampling the RSS of `children`; keeps each one's highest figure. */
  async during<T>(children: RunningChild[], work: () => Promise<T>): Promise<T> {
    const sample = () => {
      for (const child of children) {
        const m = memoryOf(child.pid);
        if (m) this.highest.set(child.name, Math.max(this.highest.get(child.name) ?? 0, m.rssMiB));
      }
    };
    const timer = setInterval(sample, 200);
    try {
      return await work();
    } finally {
      clearInterval(timer);
      sample();
    }
  }

  /** The highest RSS sampled for a process, in MiB; null when it was never under load. */
  highestOf(name: string): number | null {
    return this.highest.get(name) ?? null;
  }
}
