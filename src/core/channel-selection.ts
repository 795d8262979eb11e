/** What channel selection needs to know of a channel. */
export interface Selectable {
  id: number;
  priority: number;
  weight: number;
}

/**
 * The order in which channels are tried: highest priority tier first; within a tier a weighted
 * random order (a channel of weight 3 comes first three times as often as one of weight 1).
 * Failover walks this list; the first entry is "the" selected channel.
 */
export function orderChannels<T extends Selectable>(candidates: readonly T[], random: () => number = Math.random): T[] {
  const tiers = new Map<number, T[]>();
  for (const c of candidates) {
    const tier = tiers.get(c.priority);
    if (tier) tier.push(c);
    else tiers.set(c.priority, [c]);
  }
  const priorities = [...tiers.keys()].sort((a, b) => b - a);
  const out: T[] = [];
  for (const p of priorities) out.push(...weightedShuffle(tiers.get(p) ?? [], random));
  return out;
}

function weightedShuffle<T extends Selectable>(items: T[], random: () => number): T[] {
  const pool = [...items];
  const out: T[] = [];
  while (pool.length > 0) {
    // A weight of 0 still gets a chance when every other channel of the tier is gone.
    const weights = pool.map((c) => Math.max(0, c.weight));
    const total = weights.reduce((a, b) => a + b, 0);
    let index = 0;
    if (total > 0) {
      let r = random() * total;
      index = weights.findIndex((w) => {
        r -= w;
        return r < 0;
      });
      if (index < 0) index = pool.length - 1;
    } else {
      index = Math.floor(random() * pool.length);
    }
    out.push(...pool.splice(index, 1));
  }
  return out;
}
