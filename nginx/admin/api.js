// api.js: the same API every client uses, with the signed-in bearer token. The token lives in
// sessionStorage (this tab only, gone when it closes), never in a URL.

const KEY = 'purser.token';

export const token = {
  get: () => sessionStorage.getItem(KEY),
  set: value => sessionStorage.setItem(KEY, value),
  clear: () => sessionStorage.removeItem(KEY),
};

export class ApiError extends Error {
  constructor(status, message, body) { super(message); this.status = status; this.body = body; }
}

/** The message of an error answer in any of purser's forms. */
function messageOf(body, status) {
  if (body && typeof body === 'object') {
    if (body.kind === 'Status' && body.message) return body.message;          // the document API
    if (Array.isArray(body.error)) return body.error.join('; ');             // Chef's shape
    if (body.error && body.error.message) return body.error.message;         // purser's
  }
  return `the server answered ${status}`;
}

/** api(method, path, body?, {signal, contentType, headers, signingIn, onHeaders}) -> decoded JSON (or
 *  null); throws ApiError. onHeaders(headers) sees a success's response headers (a page's total).
 *  A 401 to a request with the token (but the sign-in's own check) signs the tab out. */
export async function api(method, path, body, options = {}) {
  const headers = { Accept: 'application/json', ...(options.headers || {}) };
  const t = token.get();
  if (t) headers.Authorization = `Bearer ${t}`;
  let payload;
  if (body !== undefined) {
    headers['Content-Type'] = options.contentType || 'application/json';
    payload = typeof body === 'string' ? body : JSON.stringify(body);
  }
  const res = await fetch(path, { method, headers, body: payload, signal: options.signal, cache: 'no-store' });
  const text = await res.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = null; }
  if (res.status === 401 && t && !options.signingIn) // the token was revoked or expired: the shell signs out
    window.dispatchEvent(new CustomEvent('purser:unauthorized'));
  if (!res.ok) throw new ApiError(res.status, messageOf(data, res.status), data);
  if (options.onHeaders) options.onHeaders(res.headers);
  return data;
}

export const enc = encodeURIComponent;

let registry = null;
/** The kinds purser serves: its registry (lib/registry), as GET /docs (open) publishes it in
 *  x-purser-kinds: [{name, plural, list, item, read, nav, page, areas, events, ...}], read once. */
export function kinds() {
  if (!registry) registry = api('GET', '/docs').then(doc => doc['x-purser-kinds'] || [], err => { registry = null; throw err; });
  return registry;
}

/** A path template of the registry with its {names} filled from values, encoded:
 *  fill('/organizations/{org}', { org: 'acme' }) is '/organizations/acme'. */
export const fill = (template, values) =>
  template.replace(/\{(\w+)\}/g, (whole, name) => (values[name] === undefined ? whole : enc(values[name])));

/** A YAML stream from the API (an export) as text; throws ApiError as api() does. */
export async function yamlText(path) {
  const t = token.get();
  const res = await fetch(path, { headers: { Accept: 'application/x-yaml', ...(t ? { Authorization: `Bearer ${t}` } : {}) }, cache: 'no-store' });
  const text = await res.text();
  if (res.status === 401 && t) window.dispatchEvent(new CustomEvent('purser:unauthorized'));
  if (!res.ok) {
    let data = null;
    try { data = JSON.parse(text); } catch { data = null; }
    throw new ApiError(res.status, messageOf(data, res.status), data);
  }
  return text;
}
