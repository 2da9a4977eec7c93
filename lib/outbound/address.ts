import ipaddr from "ipaddr.js";

type IP = ipaddr.IPv4 | ipaddr.IPv6;

/**
 * Refused in every mode, whatever the operator allows: cloud instance-metadata endpoints (AWS/GCP/Azure/OpenStack,
 * AWS ECS task metadata, AWS IPv6, Alibaba, Azure's wireserver 168.63.129.16) hand out credentials, and there is no
 * development use for them.
 */
const METADATA = new Set(["169.254.169.254", "169.254.170.2", "100.100.100.200", "168.63.129.16", "fd00:ec2::254"].map((a) => ipaddr.parse(a).toNormalizedString()));

/** Names that resolve to loopback by definition (RFC 6761), without asking DNS. */
export const isLocalhostName = (hostname: string) => /(^|\.)localhost\.?$/i.test(hostname);

/** The bare address of a URL hostname that is an IP literal (WHATWG URL has already normalized 0x7f000001 and the like), else null. */
export function ipLiteral(hostname: string): string | null {
  const bare = hostname.startsWith("[") && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname;
  return ipaddr.isValid(bare) ? bare : null;
}

const RANGE_NAMES: Record<string, string> = {
  loopback: "loopback",
  private: "private",
  uniqueLocal: "private",
  linkLocal: "link-local",
  carrierGradeNat: "shared (CGNAT)",
  unspecified: "unspecified",
  broadcast: "broadcast",
  multicast: "multicast",
};

/** 2000::/3: the only IPv6 block handed out as global unicast. */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR("2000::/3") as [ipaddr.IPv6, number];

/** IPv6 forms that carry an IPv4 address a packet may end up at: [prefix, where its IPv4 starts (byte)]. */
const EMBEDDING_V4: [ipaddr.IPv6, number, number][] = [
  ["::ffff:0:0/96", 12], // IPv4-mapped
  ["::ffff:0:0:0/96", 12], // IPv4-translated (RFC 6145)
  ["::/96", 12], // IPv4-compatible (deprecated, still routed by some stacks)
  ["64:ff9b::/96", 12], // NAT64, well-known prefix (RFC 6052)
  ["2002::/16", 2], // 6to4
].map(([cidr, at]) => {
  const [prefix, bits] = ipaddr.parseCIDR(cidr as string) as [ipaddr.IPv6, number];
  return [prefix, bits, at as number];
});

/** The IPv4 address an IPv6 one carries in a known embedding, or null. */
function embeddedV4(ip: ipaddr.IPv6): ipaddr.IPv4 | null {
  const bytes = ip.toByteArray();
  for (const [prefix, bits, at] of EMBEDDING_V4) {
    if (!ip.match(prefix, bits)) continue;
    const v4 = new ipaddr.IPv4(bytes.slice(at, at + 4));
    // ::/96 holds :: and ::1 as well, which carry no IPv4 (RFC 4291 2.5.5.1).
    if (bits === 96 && prefix.toNormalizedString() === "0:0:0:0:0:0:0:0" && bytes.slice(12, 15).every((b) => b === 0)) return null;
    return v4;
  }
  return null;
}

/** Why `ip` (or the IPv4 it carries) is refused in every mode, or null. */
function alwaysRefused(ip: IP): string | null {
  if (METADATA.has(ip.toNormalizedString())) return "a cloud metadata address";
  // 0.0.0.0 and :: reach this very server.
  if (ip.range() === "unspecified") return "an unspecified address (it reaches this server)";
  return null;
}

/**
 * What makes `address` refused as an outbound target, or null when allowed. `publicOnly` (live mode, and test mode
 * where the operator has not allowed private targets: lib/outbound/policy.ts) allows only public unicast addresses;
 * otherwise anything but the metadata endpoints and the unspecified address is allowed (local development).
 * IPv4-mapped IPv6 (::ffff:127.0.0.1) is judged as the IPv4 it carries; every IPv4 embedding is checked against the
 * always-refused list.
 */
export function addressRefusal(address: string, publicOnly: boolean): string | null {
  let ip: IP;
  try {
    ip = ipaddr.parse(address);
  } catch {
    return "not an IP address";
  }
  const carried = ip.kind() === "ipv6" ? embeddedV4(ip as ipaddr.IPv6) : null;
  if (ip.kind() === "ipv6" && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
  const always = alwaysRefused(ip) ?? (carried && alwaysRefused(carried));
  if (always) return always;
  if (!publicOnly) return null;
  const range = ip.range();
  const publicUnicast = range === "unicast" && (ip.kind() === "ipv4" || (ip as ipaddr.IPv6).match(GLOBAL_UNICAST_V6));
  if (publicUnicast) return null;
  return `a ${RANGE_NAMES[range] ?? "reserved"} address`;
}
