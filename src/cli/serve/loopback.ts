import { BlockList, isIP } from "node:net";

// Every loopback address: all of 127.0.0.0/8 (not only 127.0.0.1), ::1 and IPv4-mapped 127.x.
const loopback = new BlockList();
loopback.addSubnet("127.0.0.0", 8, "ipv4");
loopback.addAddress("::1", "ipv6");
loopback.addSubnet("::ffff:127.0.0.0", 104, "ipv6");

/** True when `host` (a name or an address, IPv6 possibly in brackets) only reaches this machine. */
export function isLoopback(host: string): boolean {
  const name = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  if (name.toLowerCase() === "localhost") return true;
  const family = isIP(name);
  if (family === 0) return false;
  return loopback.check(name, family === 4 ? "ipv4" : "ipv6");
}

// `name`, `name:port`, `[v6]` or `[v6]:port`, and nothing else: "[::1]evil.com" must not read as "[::1]".
const HOST_HEADER = /^(\[[^\]]*\]|[^[\]:]+)(?::\d*)?$/;

/** The host part of a `Host` header, or "" (never a loopback name) when the header has any other shape. */
export function hostOfHeader(header: string | undefined): string {
  return HOST_HEADER.exec(header ?? "")?.[1] ?? "";
}
