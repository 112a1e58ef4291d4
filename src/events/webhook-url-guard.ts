import type { LookupAddress, LookupOptions } from 'node:dns';
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

export interface WebhookUrlRules {
  allowHttp: boolean;
  allowPrivateNetworks: boolean;
}

// Loopback, private, link-local, shared (CGNAT) and unspecified ranges, IPv4 and IPv6.
const BLOCKED = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
] as const) {
  BLOCKED.addSubnet(network, prefix, 'ipv4');
}
BLOCKED.addAddress('255.255.255.255', 'ipv4');
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
] as const) {
  BLOCKED.addSubnet(network, prefix, 'ipv6');
}

/** `::ffff:127.0.0.1` and `::ffff:7f00:1` are IPv4 addresses in IPv6 clothing. */
function embeddedIpv4(address: string): string | undefined {
  const mapped = /^::ffff:(?:0:)?(.+)$/i.exec(address)?.[1];
  if (!mapped) return undefined;
  if (isIP(mapped) === 4) return mapped;
  const hex = /^([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(mapped);
  if (!hex) return undefined;
  const [high, low] = [Number.parseInt(hex[1]!, 16), Number.parseInt(hex[2]!, 16)];
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}

export function isBlockedAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const v4 = embeddedIpv4(bare);
  if (v4) return BLOCKED.check(v4, 'ipv4');
  const family = isIP(bare);
  return family === 0 || BLOCKED.check(bare, family === 4 ? 'ipv4' : 'ipv6');
}

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
  if (rules.allowPrivateNetworks) return undefined;
  let addresses: LookupAddress[];
  try {
    addresses = await lookup(url.hostname.replace(/^\[|\]$/g, ''), { all: true });
  } catch {
    return 'must name a host that resolves';
  }
  if (addresses.length === 0 || addresses.some((entry) => isBlockedAddress(entry.address))) {
    return 'must not resolve to a loopback, private, link-local or unspecified address';
  }
  return undefined;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for the delivery request: the address the socket connects to is the one checked,
 * so a host cannot resolve to a public address for the check and a private one for the send.
 */
export function guardedLookup(rules: WebhookUrlRules) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    lookup(hostname, { ...options, all: true })
      .then((addresses) => {
        const refused = !rules.allowPrivateNetworks && addresses.some((entry) => isBlockedAddress(entry.address));
        if (refused || addresses.length === 0) {
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
