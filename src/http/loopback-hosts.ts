/**
 * The loopback hosts of RFC 8252, as WHATWG URL writes them (and so, a URI being in its normal
 * form, as it is written): where plain http is allowed, for an app's redirect URIs (API.md
 * section 18) and for the service itself on a developer's machine.
 */
export const LOOPBACK_HOSTS: readonly string[] = ['127.0.0.1', '[::1]', 'localhost'];

/** Whether the URL is plain http on a loopback host. */
export const isLoopbackHttp = (url: URL): boolean => url.protocol === 'http:' && LOOPBACK_HOSTS.includes(url.hostname);
