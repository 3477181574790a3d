// Where outboxd may send webhooks (DESIGN §1.7, §4): https only, and never to loopback,
// private, link-local, CGNAT, multicast or other internal addresses, unless the operator
// allows private endpoints. WHATWG URL parsing already turns odd IPv4 spellings such as
// `2130706433` or `0x7f.1` into dotted quads, and ipaddr.js classifies the address.
//
// Two checks use these rules: `endpointUrlProblem` when an endpoint is created or changed
// (a name that does not resolve yet is accepted), and `sendTarget` before every send, which
// resolves the name, checks every address it resolves to and names the one to connect to,
// so the sender connects to an address that was checked (no second lookup to rebind).
import { lookup } from "node:dns/promises";
import ipaddr from "ipaddr.js";
import { memoized } from "../lib/memo.ts";

/** IPv6 global unicast is 2000::/3; everything else (::/8 compat, ULA, link-local…) is not public. */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR("2000::/3");

/** True when the address is a public unicast address that may receive webhooks. */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === "ipv6" && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  }
  if (parsed.range() !== "unicast") return false;
  return parsed.kind() === "ipv4" || (parsed as ipaddr.IPv6).match(GLOBAL_UNICAST_V6);
}

export type Resolver = (host: string) => Promise<string[]>;

export const systemResolver: Resolver = async (host) =>
  (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);

type Parsed = { url: URL; problem?: undefined } | { url?: undefined; problem: string };

/** The URL's shape: absolute, http(s) as allowed, no credentials, fragment or control characters. */
function parseEndpointUrl(text: string, allowPrivate: boolean): Parsed {
  // WHATWG parsing silently drops tabs and newlines and trims spaces; refuse them instead, so
  // the stored URL is the one that is requested and nothing can smuggle a header line.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
  if (/[\u0000-\u0020\u007f]/.test(text)) return { problem: "must not contain spaces or control characters" };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { problem: "is not a valid absolute URL" };
  }
  if (url.protocol !== "https:" && !(allowPrivate && url.protocol === "http:")) {
    return { problem: allowPrivate ? "must be an http or https URL" : "must be an https URL" };
  }
  if (url.username || url.password) return { problem: "must not contain credentials" };
  if (url.hash) return { problem: "must not contain a fragment" };
  return { url };
}

/** The host without IPv6 brackets or a trailing dot (`example.com.` is `example.com`). */
function bareHost(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, "").replace(/\.$/, "");
}

function isLocalName(host: string): boolean {
  return host === "localhost" || host.endsWith(".localhost") || !host.includes(".");
}

/** How long a create or change waits for DNS before taking the name as "does not resolve yet". */
export const CREATE_RESOLVE_TIMEOUT_MS = 5000;

/** How a refused local or plain-http URL is allowed, said where it is refused. */
const ALLOW_HINT =
  " (for a receiver on this machine or a private network, start outboxd with OUTBOXD_ALLOW_PRIVATE_ENDPOINTS=1)";

/** Why the URL may not be an endpoint, or null when it may (checked on create and change). */
export async function endpointUrlProblem(
  text: string,
  allowPrivate: boolean,
  resolve: Resolver = systemResolver,
  timeoutMs = CREATE_RESOLVE_TIMEOUT_MS,
): Promise<string | null> {
  const parsed = parseEndpointUrl(text, allowPrivate);
  if (parsed.problem !== undefined) {
    return !allowPrivate && /^http:/i.test(text) ? `${parsed.problem}${ALLOW_HINT}` : parsed.problem;
  }
  if (allowPrivate) return null;
  const host = bareHost(parsed.url);
  if (ipaddr.isValid(host)) {
    return isPublicAddress(host) ? null : `points at a private or internal address${ALLOW_HINT}`;
  }
  if (isLocalName(host)) return `points at a local host name${ALLOW_HINT}`;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let addresses: string[];
  try {
    addresses = await Promise.race([
      resolve(host),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error("timeout")), timeoutMs);
      }),
    ]);
  } catch {
    return null; // does not resolve (yet, or in time): accepted now, checked again at every send
  } finally {
    clearTimeout(timer);
  }
  return addresses.every(isPublicAddress) ? null : `resolves to a private or internal address${ALLOW_HINT}`;
}

/**
 * Where a webhook for `text` may go now:
 * - `{url, address}`: connect to `address` (checked) for `url`; `address` is null when private
 *   endpoints are allowed and the URL is requested as it is;
 * - `{blocked}`: the policy refuses it (never retried into success unless DNS or the URL changes);
 * - `{unresolved}`: the name did not resolve (a transient failure like a refused connection).
 */
export type SendTarget =
  | { url: URL; address: string | null; blocked?: undefined; unresolved?: undefined }
  | { blocked: string; url?: undefined; unresolved?: undefined }
  | { unresolved: string; url?: undefined; blocked?: undefined };

export async function sendTarget(
  text: string,
  allowPrivate: boolean,
  resolve: Resolver = systemResolver,
): Promise<SendTarget> {
  const known = sendTargetNow(text, allowPrivate);
  if (known !== null) return known;
  const url = (parsedForSend(text, allowPrivate) as { url: URL }).url;
  const host = bareHost(url);
  let addresses: string[];
  try {
    addresses = await resolve(host);
  } catch (error) {
    const code = (error as { code?: string })?.code;
    return { unresolved: `cannot resolve ${host}${code ? ` (${code})` : ""}` };
  }
  const first = addresses[0];
  if (first === undefined) return { unresolved: `cannot resolve ${host} (no addresses)` };
  // Every address, not only the one used: a name that mixes public and internal answers is refused.
  if (!addresses.every(isPublicAddress)) return { blocked: "resolves to a private or internal address" };
  return { url, address: first };
}

/**
 * sendTarget when it needs no DNS lookup (private endpoints allowed, an IP address, a refused
 * URL or local name), without a promise; null when the host name must be resolved (sendTarget).
 * A send makes no lookup for most endpoints, and a backlog sends thousands per second.
 */
export function sendTargetNow(text: string, allowPrivate: boolean): SendTarget | null {
  const parsed = parsedForSend(text, allowPrivate);
  if (parsed.problem !== undefined) return { blocked: parsed.problem };
  const { url } = parsed;
  if (allowPrivate) return { url, address: null };
  const host = bareHost(url);
  if (ipaddr.isValid(host)) {
    return isPublicAddress(host)
      ? { url, address: host }
      : { blocked: "points at a private or internal address" };
  }
  if (isLocalName(host)) return { blocked: "points at a local host name" };
  return null;
}

/**
 * parseEndpointUrl of an endpoint's stored URL, parsed once per text (each policy its own cache):
 * the URL is shared by every send to it, so nothing may change it (pinnedRequest copies it).
 */
const parsedForSend = (() => {
  const byPolicy = [false, true].map((allowPrivate) =>
    memoized((text: string) => parseEndpointUrl(text, allowPrivate), 1024),
  );
  return (text: string, allowPrivate: boolean): Parsed =>
    (byPolicy[allowPrivate ? 1 : 0] as (t: string) => Parsed)(text);
})();
