// The OpenID Provider of the sign-in tests: panva's oidc-provider on loopback, with the users,
// groups and clients a JSON file names, RS256 and ES256 keys, and a control path the test drives
// (rotate the keys, disable a user, change a user's groups, misbehave once at the token endpoint).
//
//   node t/oidc/provider.mjs CONFIG.json
//
// CONFIG: {"users": {"alice": {"password": "...", "groups": ["ops"], "name": "Alice",
//   "email_verified": true}},
//          "clients": [{"client_id", "client_secret", "redirect_uris": [...], "alg": "RS256"}]}
// It listens on a free loopback port and prints one line, {"issuer": "http://127.0.0.1:PORT"}.
// Control (POST, JSON body, only from loopback like everything here):
//   /_control/rotate                      a new RSA and EC key sign from now on; the old stay in the JWKS
//   /_control/user {"name", "disabled"?, "groups"?}
//   /_control/fault {"kind": "expired"|"foreign-key"|"audience"|"issuer"|"nonce"}   the next token answer's
//       ID token re-signed with that fault (a provider gone wrong; what purser must refuse)
//   /_control/fault {"kind": "slow_down"}   the next token request answered slow_down (RFC 8628 3.5)
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { generateKeyPair, exportJWK, SignJWT, decodeJwt, decodeProtectedHeader, importJWK } from 'jose';
import Provider from 'oidc-provider';

const config = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const users = config.users;
let fault = null;
let keyNumber = 0;
let signingKeys = [];   // private JWKs, the first of each kind signs

async function newKeys() {
  keyNumber += 1;
  const made = [];
  for (const [alg, options] of [['RS256', { modulusLength: 2048 }], ['ES256', {}]]) {
    const { privateKey } = await generateKeyPair(alg, { ...options, extractable: true });
    const jwk = await exportJWK(privateKey);
    made.push({ ...jwk, alg, use: 'sig', kid: `${alg.toLowerCase()}-${keyNumber}` });
  }
  signingKeys = [...made, ...signingKeys];
}

function account(id) {
  const user = users[id];
  if (!user || user.disabled) return undefined;
  return {
    accountId: id,
    async claims() {
      return {
        sub: id, preferred_username: id, name: user.name || id,
        email: `${id}@example.test`, email_verified: !!user.email_verified, groups: user.groups || [],
      };
    },
  };
}

let issuer = '';
function makeProvider() {
  const provider = new Provider(issuer, {
    clients: config.clients.map(c => ({
      client_id: c.client_id, client_secret: c.client_secret, redirect_uris: c.redirect_uris,
      grant_types: ['authorization_code', 'urn:ietf:params:oauth:grant-type:device_code'],
      response_types: ['code'], id_token_signed_response_alg: c.alg || 'RS256',
    })),
    jwks: { keys: signingKeys },
    findAccount: (ctx, id) => account(id),
    claims: { openid: ['sub'], profile: ['name', 'preferred_username'], email: ['email', 'email_verified'], groups: ['groups'] },
    scopes: ['openid', 'profile', 'email', 'groups'],
    conformIdTokenClaims: false,
    cookies: { keys: ['purser-test-provider-cookie-key'] },
    features: { devInteractions: { enabled: false }, deviceFlow: { enabled: true } },
    interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
    ttl: { IdToken: 300, AccessToken: 300, AuthorizationCode: 60, DeviceCode: 300, Session: 3600, Grant: 3600, Interaction: 600 },
    pkce: { required: () => true },
  });
  provider.proxy = false;
  return provider;
}

const page = (title, body) => `<!DOCTYPE html><html><head><meta charset="utf-8"><title>${title}</title></head><body>${body}</body></html>`;
const escape = s => String(s).replace(/[&<>"']/g, c => `&#${c.charCodeAt(0)};`);

function readBody(req) {
  return new Promise((resolve, reject) => {
    let data = '';
    req.on('data', chunk => { data += chunk; if (data.length > 65536) reject(new Error('too large')); });
    req.on('end', () => resolve(data));
    req.on('error', reject);
  });
}

async function interaction(provider, req, res) {
  const details = await provider.interactionDetails(req, res);
  if (details.prompt.name === 'consent') {
    const grant = new provider.Grant({ accountId: details.session.accountId, clientId: details.params.client_id });
    grant.addOIDCScope(details.params.scope);
    const grantId = await grant.save();
    return provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
  }
  let message = '';
  if (req.method === 'POST') {
    const form = new URLSearchParams(await readBody(req));
    const name = form.get('login') || '';
    const user = users[name];
    if (user && !user.disabled && user.password === form.get('password')) {
      return provider.interactionFinished(req, res, { login: { accountId: name } }, { mergeWithLastSubmission: false });
    }
    message = `<p role="alert">${user && user.disabled ? 'This account is disabled.' : 'Wrong name or password.'}</p>`;
  }
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
  res.end(page('Sign in', `<h1>Test provider</h1>${message}<form method="post" action="/interaction/${escape(details.uid)}">
    <label>Login <input name="login" autocomplete="username"></label>
    <label>Password <input name="password" type="password"></label>
    <button type="submit">Sign in</button></form>`));
}

// A provider gone wrong, once: the ID token of the next token answer re-signed with a fault.
async function applyFault(body) {
  const kind = fault; fault = null;
  const answer = JSON.parse(body);
  if (!answer.id_token) return body;
  const claims = decodeJwt(answer.id_token);
  const header = decodeProtectedHeader(answer.id_token);
  let key = signingKeys.find(k => k.kid === header.kid);
  const now = Math.floor(Date.now() / 1000);
  if (kind === 'expired') { claims.iat = now - 7200; claims.exp = now - 3600; }
  if (kind === 'audience') claims.aud = 'another-client';
  if (kind === 'issuer') claims.iss = 'http://127.0.0.1:1/elsewhere';
  if (kind === 'nonce') claims.nonce = 'another-sign-in';
  if (kind === 'stale-auth') claims.auth_time = now - 3600; // prompt=login ignored: an old session
  if (kind === 'foreign-key') {
    const { privateKey } = await generateKeyPair(header.alg, { extractable: true });
    key = { ...(await exportJWK(privateKey)), kid: header.kid };   // the same kid, another key
  }
  answer.id_token = await new SignJWT(claims).setProtectedHeader({ alg: header.alg, kid: header.kid, typ: 'JWT' })
    .sign(await importJWK(key, header.alg));
  return JSON.stringify(answer);
}

async function control(req, res, url) {
  const body = JSON.parse((await readBody(req)) || '{}');
  if (url.pathname === '/_control/rotate') {
    await newKeys();
    current = makeProvider();
  } else if (url.pathname === '/_control/user') {
    const user = users[body.name];
    if (!user) { res.writeHead(404); return res.end('no such user\n'); }
    if ('disabled' in body) user.disabled = body.disabled;
    if ('groups' in body) user.groups = body.groups;
  } else if (url.pathname === '/_control/fault') {
    fault = body.kind;
  } else {
    res.writeHead(404); return res.end('no such control\n');
  }
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ ok: true, kids: signingKeys.map(k => k.kid) }) + '\n');
}

let current;
const server = http.createServer(async (req, res) => {
  try {
    const url = new URL(req.url, issuer);
    if (url.pathname.startsWith('/_control/') && req.method === 'POST') return await control(req, res, url);
    if (url.pathname.startsWith('/interaction/')) return await interaction(current, req, res);
    if (fault === 'slow_down' && url.pathname === '/token' && req.method === 'POST') {
      fault = null;
      res.writeHead(400, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ error: 'slow_down', error_description: 'poll less often' }));
    }
    if (fault && url.pathname === '/token' && req.method === 'POST') {
      // catch the answer on its way out and change its ID token
      const end = res.end.bind(res);
      res.end = chunk => {
        res.end = end;
        applyFault(String(chunk)).then(body => {
          if (!res.headersSent) res.setHeader('content-length', Buffer.byteLength(body));
          end(body);
        });
        return res;
      };
    }
    return current.callback()(req, res);
  } catch (e) {
    res.writeHead(500, { 'content-type': 'text/plain' });
    res.end(`provider: ${e.message}\n`);
  }
});

await newKeys();
server.listen(0, '127.0.0.1', () => {
  issuer = `http://127.0.0.1:${server.address().port}`;
  current = makeProvider();
  process.stdout.write(JSON.stringify({ issuer }) + '\n');
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
