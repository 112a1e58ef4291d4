import Bowser from 'bowser';

/**
 * A session's client as a person names it ("Chrome 131 on Linux"), read from its User-Agent by
 * bowser; a client no browser table knows (curl, a service) keeps its own string.
 */
export function browserAndSystem(userAgent: string | null): string {
  if (!userAgent) return 'an unknown client';
  const { browser, os } = Bowser.parse(userAgent);
  if (!browser.name) return userAgent;
  const major = browser.version?.split('.')[0];
  return `${browser.name}${major ? ` ${major}` : ''}${os.name ? ` on ${os.name}` : ''}`;
}
