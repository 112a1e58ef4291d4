import { IntlMessageFormat } from 'intl-messageformat';

/** The values an ICU message puts in: its arguments, by name. */
export type MessageValues = Record<string, string | number>;

/**
 * English and German texts by key, as ICU messages (`intl-messageformat`: arguments, plurals and
 * numbers as each language writes them), for the hosted pages and the mails they cause. The
 * catalogues are fixed, so each message compiles once, on first use.
 */
export class MessageCatalogue<Locale extends string, Key extends string> {
  private readonly compiled = new Map<string, IntlMessageFormat>();

  constructor(private readonly catalogues: Record<Locale, Record<Key, string>>) {}

  /** The text of `key` in `locale`, with `values` put in. */
  format(locale: Locale, key: Key, values?: MessageValues): string {
    const cacheKey = `${locale}\u0000${key}`;
    let format = this.compiled.get(cacheKey);
    if (format === undefined) {
      format = new IntlMessageFormat(this.catalogues[locale][key], locale);
      this.compiled.set(cacheKey, format);
    }
    return String(format.format(values));
  }

  /** One language's catalogue, for the test that holds every language to the same keys and arguments. */
  catalogueOf(locale: Locale): Readonly<Record<Key, string>> {
    return this.catalogues[locale];
  }
}
