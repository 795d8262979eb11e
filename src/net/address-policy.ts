import net from "node:net";

/**
 * Address ranges a server-side fetch must never reach on a client's behalf: loopback, private
 * networks, link-local (cloud metadata lives at 169.254.169.254), carrier-grade NAT, multicast,
 * reserved and documentation ranges, and their IPv6 equivalents.
 */
const BLOCKED_V4: ReadonlyArray<readonly [string, number]> = [
  ["0.0.0.0", 8], // "this network"
  ["10.0.0.0", 8], // private
  ["100.64.0.0", 10], // carrier-grade NAT (also some cloud metadata endpoints)
  ["127.0.0.0", 8], // loopback
  ["169.254.0.0", 16], // link-local, cloud metadata
  ["172.16.0.0", 12], // private
  ["192.0.0.0", 24], // IETF protocol assignments
  ["192.0.2.0", 24], // documentation
  ["192.88.99.0", 24], // 6to4 relay anycast
  ["192.168.0.0", 16], // private
  ["198.18.0.0", 15], // benchmarking
  ["198.51.100.0", 24], // documentation
  ["203.0.113.0", 24], // documentation
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, broadcast
];

const BLOCKED_V6: ReadonlyArray<readonly [string, number]> = [
  ["::", 128], // unspecified
  ["::1", 128], // loopback
  ["100::", 64], // discard-only
  ["2001:db8::", 32], // documentation
  ["fc00::", 7], // unique local (includes fd00:ec2::254, a metadata address)
  ["fe80::", 10], // link-local
  ["fec0::", 10], // site-local (deprecated)
  ["ff00::", 8], // multicast
];

const blocked = new net.BlockList();
for (const [addr, bits] of BLOCKED_V4) blocked.addSubnet(addr, bits, "ipv4");
for (const [addr, bits] of BLOCKED_V6) blocked.addSubnet(addr, bits, "ipv6");

/**
 * The IPv4 addresses carried inside an IPv6 one: mapped `::ffff:a.b.c.d`, translated
 * `::ffff:0:a.b.c.d`, compatible `::a.b.c.d`, NAT64 (`64:ff9b::/96` and the local-use
 * `64:ff9b:1::/48`), 6to4 (`2002:AABB:CCDD::/48`) and Teredo (`2001:0::/32`: the server address in
 * words 2-3, the client's inverted in the last two words). Each is an address a packet may end up at.
 */
export function embeddedIpv4(address: string): string[] {
  const words = expandIpv6(address);
  if (!words) return [];
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
  const zeros = (from: number, to: number) => words.slice(from, to).every((w) => w === 0);
  const [w0, w1, w2, w3, w4, w5, w6, w7] = words as [number, number, number, number, number, number, number, number];
  // ::ffff:a.b.c.d (mapped) and ::a.b.c.d (compatible, deprecated)
  if (zeros(0, 5) && (w5 === 0xffff || w5 === 0)) return [v4(w6, w7)];
  // ::ffff:0:a.b.c.d (translated, SIIT)
  if (zeros(0, 4) && w4 === 0xffff && w5 === 0) return [v4(w6, w7)];
  // 64:ff9b::/96 (NAT64 well-known) and 64:ff9b:1::/48 (NAT64 local use): the last 32 bits
  if (w0 === 0x64 && w1 === 0xff9b) return [v4(w6, w7)];
  // 2002:AABB:CCDD::/48 (6to4)
  if (w0 === 0x2002) return [v4(w1, w2)];
  // 2001:0000::/32 (Teredo): server address, then the client's (stored inverted)
  if (w0 === 0x2001 && w1 === 0) return [v4(w2, w3), v4(w6 ^ 0xffff, w7 ^ 0xffff)];
  return [];
}

/** Eight 16-bit words of an IPv6 address (dotted IPv4 tail allowed), or null. */
function expandIpv6(address: string): number[] | null {
  let text = address.toLowerCase().split("%")[0] ?? "";
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted?.[1]) {
    const p = dotted[1].split(".").map(Number);
    text = `${text.slice(0, -dotted[1].length)}${((p[0]! << 8) | p[1]!).toString(16)}:${((p[2]! << 8) | p[3]!).toString(16)}`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(":") : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(":") : [];
  const fill = halves.length === 2 ? 8 - head.length - tail.length : 0;
  const words = [...head, ...Array<string>(Math.max(0, fill)).fill("0"), ...tail].map((w) => Number.parseInt(w, 16));
  return words.length === 8 && words.every((w) => Number.isInteger(w) && w >= 0 && w <= 0xffff) ? words : null;
}

/**
 * Whether an IP address lies in a range a guarded fetch refuses. Anything that is not a valid
 * IP address counts as blocked.
 */
export function isBlockedAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, "");
  const family = net.isIP(bare);
  if (family === 4) return blocked.check(bare, "ipv4");
  if (family !== 6) return true;
  if (embeddedIpv4(bare).some((inner) => blocked.check(inner, "ipv4"))) return true;
  return blocked.check(bare.split("%")[0] ?? bare, "ipv6");
}

/** Which addresses a guarded fetch may connect to. */
export interface AddressPolicy {
  /** Allow every address, private ranges included (trusted networks, tests). */
  allowPrivate: boolean;
  /** Extra addresses or CIDR ranges allowed even though they are private (`10.1.2.0/24`). */
  allow?: readonly string[];
}

/** A predicate for the policy: true when connecting to `address` is allowed. */
export function addressAllowed(policy: AddressPolicy): (address: string) => boolean {
  if (policy.allowPrivate) return () => true;
  const extra = new net.BlockList();
  for (const entry of policy.allow ?? []) {
    const [addr = "", bits] = entry.split("/");
    const family = net.isIPv6(addr) ? "ipv6" : "ipv4";
    if (bits === undefined) extra.addAddress(addr, family);
    else extra.addSubnet(addr, Number(bits), family);
  }
  return (address) => {
    const bare = address.replace(/^\[|\]$/g, "");
    if (net.isIP(bare) && extra.check(bare, net.isIPv6(bare) ? "ipv6" : "ipv4")) return true;
    return !isBlockedAddress(bare);
  };
}
