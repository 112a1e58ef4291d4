/**
 * Which URIs an app may register (API.md section 18, "Apps"), in plain words. A redirect URI is
 * where the service will send a user's authorization code, so anything a browser or an attacker
 * could bend is refused: a fragment (RFC 6749 §3.1.2), user information (a URL that reads as one
 * host and goes to another), `http` beyond the user's own machine (RFC 8252 §8.3), and every
 * scheme that is not `https`, loopback `http` or a native app's private-use scheme (RFC 8252
 * §7.1, a reversed domain name such as `com.example.shop`), so never `javascript:` or `data:`.
 */

/** The hosts of RFC 8252's loopback redirects, as WHATWG URL writes them. */
export const LOOPBACK_HOSTS = ['127.0.0.1', '[::1]', 'localhost'] as const;

/** `scheme://authority`: the authority, where user information would be. */
const AUTHORITY = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/([^/?#]*)/;
/** A scheme with a dot in it: a reversed domain name, as RFC 8252 §7.1 asks of private-use schemes. */
const PRIVATE_USE_SCHEME = /^[a-z][a-z0-9+-]*(\.[a-z0-9+-]+)+:$/;
// Spaces and control characters: the URL parser would drop or encode them, so what was
// registered would not be what is matched.
// eslint-disable-next-line no-control-regex
const SPACE_OR_CONTROL = /[\u0000-\u0020\u007f-\u009f]/;

function parse(uri: string): URL | undefined {
  try {
    return new URL(uri);
  } catch {
    return undefined;
  }
}

/** What is wrong with a URI before its scheme is judged; undefined when nothing. */
function refuseShape(uri: string, url: URL | undefined): string | undefined {
  if (SPACE_OR_CONTROL.test(uri)) return 'must not contain spaces or control characters';
  if (!url) return 'must be an absolute URL';
  if (AUTHORITY.exec(uri)?.[1]?.includes('@') || url.username !== '' || url.password !== '') return 'must not hold a user name or password';
  return undefined;
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
    return (LOOPBACK_HOSTS as readonly string[]).includes(hostname) ? undefined : 'may use http only on a loopback host (127.0.0.1, [::1] or localhost); use https';
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
