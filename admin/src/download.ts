/**
 * Saves a reply's body as a file, under the name its `Content-Disposition` gives (else
 * `fallbackName`): an object URL clicked as a download link, then released.
 */
export async function saveReply(response: Response, fallbackName: string): Promise<string> {
  const filename = /filename="([^"]+)"/.exec(response.headers.get('content-disposition') ?? '')?.[1] ?? fallbackName;
  saveBlob(await response.blob(), filename);
  return filename;
}

/** Saves text the console holds (recovery codes) as a file. */
export function saveText(text: string, filename: string): void {
  saveBlob(new Blob([text], { type: 'text/plain' }), filename);
}

function saveBlob(blob: Blob, filename: string): void {
  const url = URL.createObjectURL(blob);
  try {
    const link = Object.assign(document.createElement('a'), { href: url, download: filename });
    document.body.append(link);
    link.click();
    link.remove();
  } finally {
    // The click has started the download; the URL is no longer needed once this task ends.
    setTimeout(() => URL.revokeObjectURL(url), 0);
  }
}
