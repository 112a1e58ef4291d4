/**
 * What of a request's URL may be written down (API.md sections 8 and 17): the log lines and the
 * trace spans both take it from here, so neither carries a query value that might be a secret.
 */

// A query parameter whose name says it may carry a credential is written without its value.
const SECRET_PARAMETER = /token|secret|password|key|code|signature|auth/i;

/** The URL (path and query) with the value of every secret-looking query parameter `[redacted]`. */
export function withoutSecrets(url: string): string {
  const queryStart = url.indexOf('?');
  if (queryStart === -1) return url;
  const parameters = url
    .slice(queryStart + 1)
    .split('&')
    .map((pair) => {
      const name = pair.split('=')[0] ?? '';
      let decoded = name;
      try {
        decoded = decodeURIComponent(name);
      } catch {
        // A malformed name is written as sent, still without its value.
      }
      return SECRET_PARAMETER.test(decoded) || SECRET_PARAMETER.test(name) ? `${name}=[redacted]` : pair;
    });
  return `${url.slice(0, queryStart)}?${parameters.join('&')}`;
}
