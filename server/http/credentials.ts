/**
 * Where a client's credentials travel: the headers and query parameters that the security hook
 * (security.ts) reads a key from, and those that other vendors' clients put one in. The logger
 * (logger.ts) hides every one of them, accepted or refused, in every line.
 */

/** Headers the vendors' clients carry their key in: ElevenLabs', Cartesia's (the older one). */
export const KEY_HEADERS = ['xi-api-key', 'x-api-key'] as const;

/**
 * Query parameters that carry a key on a WebSocket upgrade to a vendor's socket (Cartesia's and
 * ElevenLabs' browser clients cannot set headers).
 */
export const KEY_PARAMS = ['api_key', 'xi_api_key', 'authorization'] as const;

/** Offered WebSocket subprotocols that carry the token: `bearer.` and the token in base64url. */
export const BEARER_PROTOCOL = 'bearer.';

/**
 * Headers whose values are never logged: those above, `Authorization`, and the offered
 * subprotocols (a browser's `bearer.<token>`, Deepgram's `token, <key>`).
 */
export const SECRET_HEADERS = [
  'authorization',
  'proxy-authorization',
  'cookie',
  ...KEY_HEADERS,
  'sec-websocket-protocol',
] as const;

/** Query parameters whose values are never logged, compared without case after decoding. */
const SECRET_PARAMS: ReadonlySet<string> = new Set([
  ...KEY_PARAMS,
  'xi-api-key',
  'x-api-key',
  'apikey',
  'key',
  'token',
  'access_token',
]);

export const REDACTED = '[redacted]';

/** A query parameter's name as URLSearchParams reads it (`api%5Fkey` is `api_key`). */
function paramName(raw: string): string {
  const name = raw.replace(/\+/g, ' ');
  try {
    return decodeURIComponent(name).trim().toLowerCase();
  } catch {
    return name.trim().toLowerCase();
  }
}

/**
 * A request URL with the value of every secret query parameter replaced by `[redacted]`; the path
 * and the other parameters stay as they were sent.
 */
export function redactUrl(url: string): string {
  const at = url.indexOf('?');
  if (at < 0) return url;
  const pairs = url
    .slice(at + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const name = eq < 0 ? pair : pair.slice(0, eq);
      return eq >= 0 && SECRET_PARAMS.has(paramName(name)) ? `${name}=${REDACTED}` : pair;
    });
  return `${url.slice(0, at)}?${pairs.join('&')}`;
}

/**
 * Text that may quote a URL (an error's message or stack), with the secret query parameters of
 * every URL in it redacted.
 */
export function redactUrlsIn(text: string): string {
  return text.replace(/\?[^\s'"`<>]*/g, (query) => redactUrl(query));
}
