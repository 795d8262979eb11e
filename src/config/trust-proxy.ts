import net from "node:net";

/**
 * Which hops of X-Forwarded-For to believe (`TRUST_PROXY`): none, a number of proxies, or the
 * proxies' addresses. Trusting every hop is refused: any client could then write its own address.
 */

/** Why `true` is refused, and what to write instead. */
export const TRUST_ALL_REFUSED =
  "would trust any X-Forwarded-For header, so every client could choose its own address (and pass token IP " +
  "allowlists and the failed-authentication limit). Write the number of proxies in front of the gateway " +
  "(TRUST_PROXY=1 behind one load balancer) or their addresses (TRUST_PROXY=10.0.0.0/8,192.168.1.5)";

/** The setting as written in the environment, or the word that asked to trust every hop. */
export function trustProxySetting(raw: string | undefined): { value: false | number | string } | { refused: string } {
  const text = raw?.trim() ?? "";
  if (text === "" || /^(0|false|no|off)$/i.test(text)) return { value: false };
  if (/^(true|yes|on)$/i.test(text)) return { refused: text };
  if (/^\d+$/.test(text)) return { value: Number(text) };
  return { value: text };
}

/** Named ranges the proxy list may use besides addresses and CIDRs. */
const NAMED_PROXY_RANGES = new Set(["loopback", "linklocal", "uniquelocal"]);

/** The first entry of a proxy list that is neither an address, a CIDR nor a named range. */
export function badProxyEntry(list: string): string | null {
  for (const entry of list.split(",").map((e) => e.trim())) {
    if (NAMED_PROXY_RANGES.has(entry)) continue;
    const [addr = "", bits, extra] = entry.split("/");
    const family = net.isIP(addr);
    if (extra !== undefined || family === 0) return entry;
    if (bits !== undefined && (!/^\d+$/.test(bits) || Number(bits) > (family === 6 ? 128 : 32))) return entry;
  }
  return null;
}
