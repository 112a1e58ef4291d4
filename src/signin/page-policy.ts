/**
 * The Content-Security-Policy of a hosted page (API.md section 18): scripts, styles and
 * connections to this origin only, never inline; images from this origin and the origins of
 * SIGNIN_LOGO_URL and the app's logo_uri; no framing, no <base>, no plugins. Forms post to the
 * page itself, but a browser also holds the redirect that answers a post to `form-action`
 * (Chromium does), so a page whose post ends at the app's redirect_uri names that URI's origin.
 */
export function pagePolicy({ imageUrls = [], formTargets = [] }: { imageUrls?: (string | undefined)[]; formTargets?: string[] }): string {
  const images = sources(imageUrls);
  const forms = sources(formTargets);
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "connect-src 'self'",
    ['img-src', "'self'", ...images].join(' '),
    ['form-action', "'self'", ...forms].join(' '),
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
}

/**
 * Each URL's origin as a CSP source expression, once. A private-use scheme (a native app's
 * `com.example.shop:/callback`) has no origin: its scheme (`com.example.shop:`) is the source.
 */
function sources(urls: (string | undefined)[]): string[] {
  const found = new Set<string>();
  for (const url of urls) {
    if (url === undefined) continue;
    const parsed = new URL(url);
    found.add(parsed.protocol === 'https:' || parsed.protocol === 'http:' ? parsed.origin : parsed.protocol);
  }
  return [...found];
}
