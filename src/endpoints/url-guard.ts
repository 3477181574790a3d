// Where outboxd may send webhooks (DESIGN §1.7, §4): https only, and never to loopback,
// private, link-local, CGNAT, multicast or other internal addresses, unless the operator
// allows private endpoints. WHATWG URL parsing already turns odd IPv4 spellings such as
// `2130706433` or `0x7f.1` into dotted quads, and ipaddr.js classifies the address.
import { lookup } from "node:dns/promises";
import ipaddr from "ipaddr.js";

/** True when the address is a public unicast address that may receive webhooks. */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === "ipv6" && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  }
  return parsed.range() === "unicast";
}

export type Resolver = (host: string) => Promise<string[]>;

export const systemResolver: Resolver = async (host) =>
  (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);

/** Why the URL may not be an endpoint, or null when it may. */
export async function endpointUrlProblem(
  text: string,
  allowPrivate: boolean,
  resolve: Resolver = systemResolver,
): Promise<string | null> {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return "is not a valid absolute URL";
  }
  if (url.protocol !== "https:" && !(allowPrivate && url.protocol === "http:")) {
    return allowPrivate ? "must be an http or https URL" : "must be an https URL";
  }
  if (url.username || url.password) return "must not contain credentials";
  if (url.hash) return "must not contain a fragment";
  if (allowPrivate) return null;
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (ipaddr.isValid(host)) return isPublicAddress(host) ? null : "points at a private or internal address";
  if (host === "localhost" || host.endsWith(".localhost") || !host.includes(".")) {
    return "points at a local host name";
  }
  let addresses: string[];
  try {
    addresses = await resolve(host);
  } catch {
    return null; // does not resolve yet: accepted now, checked again at every send
  }
  return addresses.every(isPublicAddress) ? null : "resolves to a private or internal address";
}
