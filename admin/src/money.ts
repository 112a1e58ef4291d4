/**
 * Amounts are typed and shown in the currency's major unit (12.50) and sent in minor units
 * (1250). The conversion works on the digits, never on a binary fraction, so it is exact.
 */

const fractionDigitsByCurrency = new Map<string, number>();

export function fractionDigits(currency: string): number {
  let digits = fractionDigitsByCurrency.get(currency);
  if (digits === undefined) {
    digits = new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
    fractionDigitsByCurrency.set(currency, digits);
  }
  return digits;
}

export const formatMoney = (minorUnits: number, currency: string) =>
  new Intl.NumberFormat(undefined, { style: 'currency', currency }).format(minorUnits / 10 ** fractionDigits(currency));

/** The amount as it would be typed back into a field: 1250 → "12.50". */
export function toMajorUnits(minorUnits: number, currency: string): string {
  const digits = fractionDigits(currency);
  const sign = minorUnits < 0 ? '-' : '';
  const text = String(Math.abs(minorUnits)).padStart(digits + 1, '0');
  return digits === 0 ? `${sign}${text}` : `${sign}${text.slice(0, -digits)}.${text.slice(-digits)}`;
}

export type ParsedAmount = { ok: true; minorUnits: number } | { ok: false; message: string };

/** "12.50", "-3", "0.5" → minor units; more decimals than the currency has, or anything else, is refused. */
export function parseAmount(text: string, currency: string, options: { allowNegative?: boolean } = {}): ParsedAmount {
  const digits = fractionDigits(currency);
  const match = /^(-)?(\d{1,13})(?:[.,](\d*))?$/.exec(text.trim());
  const example = digits === 0 ? '12' : `12.${'5'.padEnd(digits, '0')}`;
  if (!match) return { ok: false, message: `Enter an amount like ${example}${options.allowNegative ? ` (-${example} to debit)` : ''}.` };
  // "-3" reads as an amount: say what is wrong with it rather than ask for "an amount" again.
  if (match[1] && !options.allowNegative) return { ok: false, message: `It cannot be negative: enter 0 or more, like ${example}.` };
  const fraction = match[3] ?? '';
  if (fraction.length > digits) return { ok: false, message: `${currency} has ${digits} decimal places.` };
  const minorUnits = Number(match[2]) * 10 ** digits + Number(fraction.padEnd(digits, '0') || '0');
  return { ok: true, minorUnits: match[1] ? -minorUnits : minorUnits };
}
