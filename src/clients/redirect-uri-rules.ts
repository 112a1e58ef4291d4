import { LOOPBACK_HOSTS } from '../http/loopback-hosts.js';

/**
 * Which URIs an app may register (API.md section 18, "Apps"), in plain words. A redirect URI is
 * where the service will send a user's authorization code, so anything a browser or an attacker
 * could bend is refused: a fragment (RFC 6749 §3.1.2), user information (a URL that reads as one
 * host and goes to another), `http` beyond the user's own machine (RFC 8252 §8.3), and every
 * scheme that is not `https`, loopback `http` or a native app's private-use scheme (RFC 8252
 * §7.1, a reversed domain name such as `com.example.shop`), so never `javascript:` or `data:`.
 */

/** `scheme://authority`: the authority, where user information would be. */
const AUTHORITY = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/([^/?#]*)/;
/** A scheme with a dot in it: a reversed domain name, as RFC 8252 §7.1 asks of private-use schemes. */
const PRIVATE_USE_SCHEME = /^[a-z][a-z0-9+-]*(\.[a-z0-9+-]+)+:$/;

function parse(uri: string): URL | undefined {
  try {
    return new URL(uri);
  } catch {
    return undefined;
  }
}

/**
 * A URI is judged as the URL parser reads it, and matched later as it was stored: the two must
 * be the same text. So it must be written as the parser writes it back (`href`): this refuses an
 * upper-case scheme or host, a backslash, `https:example.com`, IPv4 shorthands (`127.1`,
 * `2130706433`), a host with a trailing dot, a percent-encoded or full-width host, spaces,
 * control and invisible characters, and `https://host` without the `/` of its path.
 */
function refuseUnlessNormal(uri: string, url: URL): string | undefined {
  if (url.href === uri) return undefined;
  const slashOnly = url.href === `${uri}/` ? ' (a URL with a host has a path of at least `/`)' : '';
  return `must be written in its normal form: ${url.href}${slashOnly}`;
}

/** What is wrong with a URI before its scheme is judged; undefined when nothing. */
function refuseShape(uri: string, url: URL | undefined): string | undefined {
  if (!url) return 'must be an absolute URL';
  if (AUTHORITY.exec(uri)?.[1]?.includes('@') || url.username !== '' || url.password !== '') return 'must not hold a user name or password';
  return refuseUnlessNormal(uri, url);
}

/** Why an app may not register this redirect URI (`redirect_uris`, `post_logout_redirect_uris`); undefined when it may. */
export function refuseRedirectUri(uri: string): string | undefined {
  const url = parse(uri);
  const shape = refuseShape(uri, url);
  if (shape) return shape;
  if (uri.includes('#')) return 'must not have a fragment (#)';
  const { protocol, hostname, host, pathname } = url!;
  if (protocol === 'https:') return undefined;
  if (protocol === 'http:') {
    return LOOPBACK_HOSTS.includes(hostname) ? undefined : 'may use http only on a loopback host (127.0.0.1, [::1] or localhost); use https';
  }
  if (!PRIVATE_USE_SCHEME.test(protocol)) {
    return 'must use https, http on a loopback host, or a private-use scheme of a native app such as com.example.shop:/callback';
  }
  if (pathname === '' && host === '') return 'must have a path after the scheme, such as com.example.shop:/callback';
  return undefined;
}

/** Why an app may not show this as its logo; undefined when it may. */
export function refuseLogoUri(uri: string): string | undefined {
  const url = parse(uri);
  return refuseShape(uri, url) ?? (url!.protocol === 'https:' ? undefined : 'must be an https URL');
}
