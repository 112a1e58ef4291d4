import { reply } from './api';

/**
 * Downloads what a call (made with `parseAs: 'stream'`, so the body is left unread) answers,
 * as the file the service names in `Content-Disposition` (else `fallbackName`), and returns
 * the name; a refusal is thrown as the API's problem.
 */
export async function saveDownload(call: Promise<{ data?: unknown; error?: unknown; response: Response }>, fallbackName: string): Promise<string> {
  await reply(call);
  return saveReply((await call).response, fallbackName);
}

/** Saves a reply's body as a file: an object URL clicked as a download link, then released. */
async function saveReply(response: Response, fallbackName: string): Promise<string> {
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
