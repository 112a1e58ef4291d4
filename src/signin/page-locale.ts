/** The languages the hosted sign-in pages and the emails they cause are written in. */
export const PAGE_LOCALES = ['en', 'de'] as const;
export type PageLocale = (typeof PAGE_LOCALES)[number];

const isPageLocale = (value: string): value is PageLocale => (PAGE_LOCALES as readonly string[]).includes(value);

/** The first of BCP 47 tags, in order of preference, whose language the pages are written in (`de-AT` is `de`). */
function firstSupported(tags: string[]): PageLocale | undefined {
  for (const tag of tags) {
    const language = tag.trim().toLowerCase().split('-')[0] ?? '';
    if (isPageLocale(language)) return language;
  }
  return undefined;
}

/** Accept-Language's tags by their weight, highest first; a tag with `q=0` is one the browser refuses. */
function acceptedTags(header: string): string[] {
  return header
    .split(',')
    .map((part, position) => {
      const [tag = '', ...parameters] = part.split(';');
      const weight = parameters.map((parameter) => /^\s*q\s*=\s*(0(?:\.\d{0,3})?|1(?:\.0{0,3})?)\s*$/.exec(parameter)?.[1]).find((value) => value !== undefined);
      return { tag: tag.trim(), weight: weight === undefined ? 1 : Number(weight), position };
    })
    .filter(({ tag, weight }) => tag !== '' && tag !== '*' && weight > 0)
    .sort((left, right) => right.weight - left.weight || left.position - right.position)
    .map(({ tag }) => tag);
}

/**
 * The language of a page (API.md section 18): the authorization request's `ui_locales` (space
 * separated, in order of preference), then the browser's Accept-Language, then
 * SIGNIN_DEFAULT_LOCALE. A language the pages are not written in is skipped, not an error
 * (OpenID Connect Core 3.1.2.1: ui_locales is a preference).
 */
export function chooseLocale(uiLocales: string | undefined, acceptLanguage: string | undefined, fallback: PageLocale): PageLocale {
  return firstSupported((uiLocales ?? '').split(' ')) ?? firstSupported(acceptedTags(acceptLanguage ?? '')) ?? fallback;
}
