import type { LookupAddress, LookupOptions } from 'node:dns';
import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';

export interface WebhookUrlRules {
  allowHttp: boolean;
  allowPrivateNetworks: boolean;
}

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];
const ranges = (cidrs: string[]): Range[] => cidrs.map((cidr) => ipaddr.parseCIDR(cidr));

/**
 * What WEBHOOK_ALLOW_PRIVATE_NETWORKS lifts (API.md section 10): loopback, private, shared
 * (CGNAT), link-local and unspecified addresses, for development.
 */
const PRIVATE = ranges([
  '0.0.0.0/32', '10.0.0.0/8', '100.64.0.0/10', '127.0.0.0/8', '169.254.0.0/16', '172.16.0.0/12', '192.168.0.0/16',
  '::/128', '::1/128', 'fc00::/7', 'fe80::/10',
]);

/**
 * Never global unicast, whatever the deployment allows: every range of IANA's IPv4 and IPv6
 * special-purpose address registries (RFC 6890 and updates) marked not globally reachable, beyond
 * PRIVATE. IPv4: this network 0/8, IETF protocol assignments 192.0.0/24 (whole, as API.md section
 * 10 says), TEST-NET-1/2/3, the deprecated 6to4 relay anycast 192.88.99/24, benchmarking 198.18/15,
 * multicast 224/4, reserved 240/4 (limited broadcast included). IPv6 outside 2000::/3 is refused
 * by its prefix alone (NAT64 local-use 64:ff9b:1::/48, discard 100::/64, the dummy prefix
 * 100:0:0:1::/64, IPv4-translated ::ffff:0:0:0/96, site-local, multicast, unassigned space);
 * inside it: IETF protocol assignments 2001::/23 whole (Teredo, benchmarking 2001:2::/48, ORCHID
 * 2001:10::/28, ORCHIDv2 2001:20::/28; its few globally reachable rows are protocol anycast
 * addresses and identifiers, never a webhook receiver), documentation 2001:db8::/32 and
 * 3fff::/20, segment routing SIDs 5f00::/16.
 */
const RESERVED = ranges([
  '0.0.0.0/8', '192.0.0.0/24', '192.0.2.0/24', '192.88.99.0/24', '198.18.0.0/15', '198.51.100.0/24', '203.0.113.0/24', '224.0.0.0/4', '240.0.0.0/4',
  '2001::/23', '2001:db8::/32', '3fff::/20', '5f00::/16',
]);

/** IPv6 global unicast (RFC 4291): every other IPv6 address is refused unless PRIVATE lifts it. */
const [GLOBAL_UNICAST, GLOBAL_UNICAST_BITS] = ipaddr.parseCIDR('2000::/3');

const within = (address: ipaddr.IPv4 | ipaddr.IPv6, list: Range[]) =>
  list.some(([network, bits]) => network.kind() === address.kind() && address.match(network, bits));

/**
 * The IPv4 address an IPv6 address carries, for the forms that reach an IPv4 host: mapped
 * (::ffff:0:0/96), compatible (::/96), NAT64 (64:ff9b::/96) and 6to4 (2002::/16).
 */
function embeddedIpv4(address: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const bytes = address.toByteArray();
  const from = (offset: number) => new ipaddr.IPv4(bytes.slice(offset, offset + 4));
  if (address.isIPv4MappedAddress()) return address.toIPv4Address();
  if (address.match(ipaddr.parseCIDR('64:ff9b::/96')[0], 96)) return from(12);
  if (address.match(ipaddr.parseCIDR('2002::/16')[0], 16)) return from(2);
  // ::/96 compatible, but not :: and ::1 themselves (judged as IPv6 below).
  if (bytes.slice(0, 12).every((byte) => byte === 0) && !(bytes[12] === 0 && bytes[13] === 0 && bytes[14] === 0 && bytes[15]! <= 1)) return from(12);
  return undefined;
}

/** Whether a webhook may be sent to this address: global unicast only, or private ones when allowed. */
export function isRefusedAddress(text: string, allowPrivateNetworks: boolean): boolean {
  const bare = text.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (!ipaddr.isValid(bare)) return true;
  let address = ipaddr.parse(bare);
  if (address.kind() === 'ipv6') address = embeddedIpv4(address as ipaddr.IPv6) ?? address;
  if (within(address, PRIVATE)) return !allowPrivateNetworks;
  if (address.kind() === 'ipv6' && !address.match(GLOBAL_UNICAST, GLOBAL_UNICAST_BITS)) return true;
  return within(address, RESERVED);
}

/** For tests and callers that only ask about the default rules. */
export const isBlockedAddress = (address: string) => isRefusedAddress(address, false);

/** A DNS lookup at delivery or registration gives up after this long. */
export const DNS_TIMEOUT_MS = 5000;

function lookupWithin(hostname: string, options: LookupOptions): Promise<LookupAddress[]> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      const error: NodeJS.ErrnoException = new Error(`no DNS answer for ${hostname} within ${DNS_TIMEOUT_MS / 1000} s`);
      error.code = 'ETIMEOUT';
      reject(error);
    }, DNS_TIMEOUT_MS);
  });
  return Promise.race([lookup(hostname, { ...options, all: true }), deadline]).finally(() => clearTimeout(timer));
}

const REFUSED = 'must not resolve to a loopback, private, link-local, reserved or other address that is not global unicast';

/** Why a URL may not receive webhooks, or undefined when it may (its host resolved now). */
export async function refuseWebhookUrl(text: string, rules: WebhookUrlRules): Promise<string | undefined> {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.protocol !== 'https:' && !(rules.allowHttp && url.protocol === 'http:')) {
    return rules.allowHttp ? 'must be an http:// or https:// URL' : 'must be an https:// URL';
  }
  if (url.username || url.password) return 'must not carry credentials';
  let addresses: LookupAddress[];
  try {
    addresses = await lookupWithin(url.hostname.replace(/^\[|\]$/g, ''), {});
  } catch {
    return 'must name a host that resolves';
  }
  if (addresses.length === 0 || addresses.some((entry) => isRefusedAddress(entry.address, rules.allowPrivateNetworks))) return REFUSED;
  return undefined;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for the delivery request: the address the socket connects to is the one checked,
 * so a host cannot resolve to a public address for the check and a private one for the send.
 */
export function guardedLookup(rules: WebhookUrlRules) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    lookupWithin(hostname, options)
      .then((addresses) => {
        if (addresses.length === 0 || addresses.some((entry) => isRefusedAddress(entry.address, rules.allowPrivateNetworks))) {
          const error: NodeJS.ErrnoException = new Error(`${hostname} resolves to an address webhooks may not reach`);
          error.code = 'EADDRNOTALLOWED';
          callback(error, '');
          return;
        }
        if (options.all) callback(null, addresses);
        else callback(null, addresses[0]!.address, addresses[0]!.family);
      })
      .catch((error: NodeJS.ErrnoException) => callback(error, ''));
  };
}

/** A URL as events show it: its origin only, never a path, query or credentials another subscriber could read. */
export function originOf(text: string): string {
  try {
    return new URL(text).origin;
  } catch {
    return '';
  }
}
