/**
 * Copies text the API shows once (a secret, recovery codes) and says how it went. The clipboard
 * exists only on secure origins (https, localhost): elsewhere the text is there to select.
 */
export async function copyText(text: string, what: string): Promise<string> {
  if (!navigator.clipboard) return `Copying needs https: select the ${what} to copy by hand.`;
  try {
    await navigator.clipboard.writeText(text);
    return 'Copied.';
  } catch {
    return `Copy failed: select the ${what} to copy by hand.`;
  }
}
