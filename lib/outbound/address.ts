import ipaddr from "ipaddr.js";

/**
 * Cloud instance-metadata endpoints (AWS/GCP/Azure/OpenStack, AWS ECS task metadata, AWS IPv6,
 * Alibaba): refused in every mode, there is no development use for them and they hand out
 * credentials.
 */
const METADATA = ["169.254.169.254", "169.254.170.2", "100.100.100.200", "fd00:ec2::254"].map((a) => ipaddr.parse(a).toNormalizedString());

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

/**
 * What makes `address` refused as an outbound target ("a private address"), or null when allowed. Live mode
 * allows only public unicast addresses; test mode allows anything (local development) but the
 * metadata endpoints. IPv4-mapped IPv6 (::ffff:127.0.0.1) is judged as the IPv4 it carries.
 */
export function addressRefusal(address: string, livemode: boolean): string | null {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.parse(address);
  } catch {
    return "not an IP address";
  }
  if (ip.kind() === "ipv6" && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
  if (METADATA.includes(ip.toNormalizedString())) return "a cloud metadata address";
  if (!livemode) return null;
  const range = ip.range();
  const publicUnicast = range === "unicast" && (ip.kind() === "ipv4" || (ip as ipaddr.IPv6).match(GLOBAL_UNICAST_V6));
  if (publicUnicast) return null;
  return `a ${RANGE_NAMES[range] ?? "reserved"} address`;
}
