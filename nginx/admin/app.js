// app.js: the admin pages' shell: sign-in, the organization switcher, the navigation and the
// router. Every page's address is its hash (#/o/ORG/policies?q=web): reload keeps it, back
// and forward work, a link can be shared (the token is not in it: whoever opens the link
// signs in first).
import { api, token, enc, kinds, fill } from './api.js';
import { h, show, spinner, failure } from './dom.js';

// The kinds purser serves come from its registry (lib/registry, GET /docs' x-purser-kinds), read
// once: the navigation's sections are theirs, and the page modules they name serve the pages
// (each module's `pages`: path pattern -> page(ctx); ctx: {org, params, query, perms,
// can(action, group?), go(path)}). None is listed here.
let sections = [], routes = null, organizationKind = null;
async function registry() {
  if (routes) return;
  const all = await kinds();
  // the kind that is the {org} of the others: the switcher's list, the permissions' path
  organizationKind = all.find(k => k.item && k.item.endsWith('/{org}'));
  sections = all.filter(k => k.nav).map(k => [k.nav.path, k.nav.title]);
  const modules = await Promise.all([...new Set(all.map(k => k.page).filter(Boolean))]
    .map(name => import(`./pages/${name}.js`)));
  routes = modules.flatMap(m => m.pages || []);
}

let current = { org: null, perms: null, principal: null, stop: null };
let organizations = null; // the switcher's first page, read once per sign-in
// The switcher lists the first organizations by name, one page: a server of 10,000 opens as
// fast as one of ten; past them, its last option opens the organizations' list (filtered, paged).
const SWITCHER_PAGE = 100;
let navigation = 0; // a page that finishes after the user moved on shows nothing

function parseHash() {
  const raw = location.hash.replace(/^#/, '') || '/';
  const [path, qs] = raw.split('?');
  return { path, query: new URLSearchParams(qs || '') };
}

export function go(path) { location.hash = '#' + path; }

function match(pattern, path) {
  const a = pattern.split('/'), b = path.split('/');
  if (a.length !== b.length) return null;
  const params = {};
  for (let i = 0; i < a.length; i++) {
    if (a[i].startsWith(':')) params[a[i].slice(1)] = decodeURIComponent(b[i]);
    else if (a[i] !== b[i]) return null;
  }
  return params;
}

function signIn(message) {
  organizations = null;
  current = { org: null, perms: null, principal: null, stop: null };
  document.getElementById('sign-out').hidden = true;
  document.getElementById('org-switch').hidden = true;
  document.getElementById('nav').replaceChildren();
  document.getElementById('principal').textContent = '';
  const input = h('input', { id: 'token', type: 'password', autocomplete: 'off', required: true });
  const form = h('form.signin', { onsubmit: async e => {
    e.preventDefault();
    token.set(input.value.trim());
    try {
      await registry();
      await api('GET', `${organizationKind.list}?page_size=1`, undefined, { signingIn: true });
      const back = sessionStorage.getItem('purser.after') || '/orgs';
      sessionStorage.removeItem('purser.after');
      go(back === '/signin' ? '/orgs' : back);
      if (location.hash === '#' + back) route();
    } catch (err) {
      token.clear();
      signIn(err.status === 401 ? 'That token is not valid (or no longer).' : err.message);
    }
  } },
    h('h1', {}, 'Sign in to purser'),
    message ? h('div.error', { role: 'alert' }, message) : null,
    h('div.sso', { id: 'sso' }),
    h('p', {}, 'Or paste an API token (purser create-user prints one; users make more under "My tokens"). It is kept in this tab only.'),
    h('label', { for: 'token' }, 'API token'), input,
    h('button', { type: 'submit' }, 'Sign in'));
  show(form);
  input.focus();
  // "Sign in with NAME" for each identity provider: a plain link, the browser goes to purser's
  // start, then the provider, then purser's callback, which comes back to #/sso with a one-time code
  api('GET', '/auth/sso/providers', undefined, { signingIn: true }).then(list => {
    const box = document.getElementById('sso');
    if (box) box.replaceChildren(...(list.items || []).map(p =>
      h('a.button', { href: `/auth/sso/${enc(p.name)}/start`,
        onclick: () => sessionStorage.setItem('purser.sso', p.name) }, `Sign in with ${p.display_name}`)));
  }).catch(() => {});
}

// The end of a sign-in through an identity provider: the one-time code in this page's address
// (a fragment: never sent to a server) is traded for the session token, and taken out of the
// address and the history before anything else runs. Only a sign-in this tab began is finished
// (login CSRF: a link with someone else's code signs no one in); the server asks the browser's
// sign-in cookie back as well.
async function finishSso(query) {
  const code = query.get('code');
  const begun = sessionStorage.getItem('purser.sso');
  history.replaceState(null, '', '#/signin');
  sessionStorage.removeItem('purser.sso');
  if (!begun) {
    signIn('That sign-in link was not begun in this tab: nothing was signed in. Use "Sign in with …" below.');
    return;
  }
  try {
    const session = await api('POST', '/auth/sso/session', { code }, { signingIn: true });
    token.set(session.token);
    const back = sessionStorage.getItem('purser.after') || '/orgs';
    sessionStorage.removeItem('purser.after');
    go(back === '/signin' ? '/orgs' : back);
  } catch (err) {
    signIn(err.message);
  }
}

// Whether the permissions answer allows action (on policy group `group`, when given: an action
// listed under policy_groups is held only on the groups its patterns match, * and ? as globs).
function allows(perms, action, group) {
  if (!perms || !perms.actions.includes(action)) return false;
  const limits = (perms.policy_groups || {})[action];
  if (!limits || group === undefined) return true;
  return limits.some(p => new RegExp('^' + p.replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*').replace(/\?/g, '.') + '$').test(group));
}

async function shell(org) {
  const select = document.getElementById('org-switch');
  document.getElementById('sign-out').hidden = false;
  if (org !== current.org) {
    current = { org, perms: null, principal: null };
    if (org) {
      current.perms = await api('GET', `${fill(organizationKind.item, { org })}/permissions`);
      current.principal = current.perms.principal;
    }
  }
  const orgs = organizations ||
    (organizations = await api('GET', `${organizationKind.list}?page_size=${SWITCHER_PAGE}&sort=name`));
  const names = (orgs.items || []).map(o => o.metadata.name);
  select.replaceChildren(...names.map(name =>
    h('option', { value: name, selected: name === org }, name)));
  if (org && !names.includes(org)) select.prepend(h('option', { value: org, selected: true }, org));
  if (orgs.next_page_token) select.append(h('option', { value: '', selected: !org }, 'All organizations…'));
  select.hidden = false;
  document.getElementById('principal').textContent = current.principal ? `signed in as ${current.principal}` : '';
  const nav = document.getElementById('nav');
  nav.replaceChildren(h('a', { href: '#/orgs' }, 'Organizations'),
    ...(org ? sections.map(([path, title]) => {
      const href = `#/o/${enc(org)}/${path}`;
      return h('a', { href, 'aria-current': location.hash.startsWith(href) ? 'page' : null }, title);
    }) : []));
}

// A page that failed before saying what it is: its section's title and a link to the list.
function fallbackContext(path) {
  const [, o, org, section, item] = path.split('/');
  const found = o === 'o' && sections.find(([p]) => p === section || p === section + 's');
  if (!found || item === undefined) return [h('h1', {}, found ? found[1] : 'purser'), h('a', { href: '#/orgs' }, '← organizations')];
  return [h('h1', {}, found[1]), h('a', { href: `#/o/${enc(org)}/${found[0]}` }, `← ${found[1].toLowerCase()}`)];
}

// The token stopped working (revoked, perhaps from this very tab, or expired): forget it and
// show the sign-in, which comes back to this page once signed in again.
function signedOut() {
  if (!token.get()) return;
  token.clear();
  navigation++;
  if (current.stop) { current.stop(); current.stop = null; }
  const { path, query } = parseHash();
  if (path !== '/signin' && path !== '/') sessionStorage.setItem('purser.after', path + (query.toString() ? '?' + query : ''));
  history.replaceState(null, '', '#/signin');
  signIn('This tab\'s token is no longer valid (revoked or expired): sign in again.');
}

async function route() {
  if (current.stop) { current.stop(); current.stop = null; }
  const { path, query } = parseHash();
  if (path === '/sso') return finishSso(query);
  if (!token.get() || path === '/signin') {
    if (path !== '/signin' && path !== '/') sessionStorage.setItem('purser.after', path + (query.toString() ? '?' + query : ''));
    return signIn();
  }
  if (path === '/') return go('/orgs');
  const mine = ++navigation;
  try { await registry(); } catch (err) {
    if (err.status === 401) return signedOut();
    return show(failure(err));
  }
  for (const [pattern, page] of routes) {
    const params = match(pattern, path);
    if (!params) continue;
    show(spinner());
    let context = null; // what a page shows above an error: its title, back link and filters
    try {
      await shell(params.org || null);
      const ctx = {
        org: params.org, params, query, perms: current.perms,
        can: (action, group) => allows(current.perms, action, group),
        go, setQuery: q => { const s = q.toString(); history.replaceState(null, '', '#' + path + (s ? '?' + s : '')); },
        onLeave: fn => { current.stop = fn; },
        show: (...children) => { if (mine === navigation) show(...children); },
        context: (...children) => { context = children; },
      };
      await page(ctx);
    } catch (err) {
      if (mine !== navigation) return;
      if (err.status === 401) return signedOut();
      show(...(context || fallbackContext(path)), failure(err));
    }
    document.getElementById('main').focus({ preventScroll: true });
    return;
  }
  show(h('p', {}, 'No such page. '), h('a', { href: '#/orgs' }, 'Organizations'));
}

document.addEventListener('DOMContentLoaded', () => {
  document.getElementById('sign-out').addEventListener('click', async () => {
    // a sign-in's session ends on the server too (a pasted token is left alone there)
    try { await api('POST', '/auth/sso/sign-out', undefined, { signingIn: true }); } catch { /* gone already */ }
    token.clear();
    go('/signin');
  });
  document.getElementById('org-switch').addEventListener('change', e => {
    if (!e.target.value) return go('/orgs'); // (past the first page: the organizations' list)
    const rest = parseHash().path.split('/')[3];
    const section = sections.some(([p]) => p === rest) ? rest : sections[0][0];
    go(`/o/${enc(e.target.value)}/${section}`);
  });
  const toggle = document.getElementById('menu-toggle'), nav = document.getElementById('nav');
  toggle.addEventListener('click', () => {
    const open = toggle.getAttribute('aria-expanded') !== 'true';
    toggle.setAttribute('aria-expanded', String(open));
    nav.classList.toggle('open', open);
  });
  document.addEventListener('keydown', e => { // Escape closes the open menu (on a phone), focus back on its button
    if (e.key !== 'Escape' || !nav.classList.contains('open') || document.querySelector('dialog[open]')) return;
    toggle.setAttribute('aria-expanded', 'false');
    nav.classList.remove('open');
    toggle.focus();
  });
  window.addEventListener('hashchange', () => { // a page chosen from the menu closes it (on a phone)
    toggle.setAttribute('aria-expanded', 'false');
    nav.classList.remove('open');
  });
  window.addEventListener('hashchange', route);
  window.addEventListener('purser:unauthorized', signedOut);
  window.addEventListener('purser:organizations', () => { organizations = null; }); // one made or deleted: the switcher reads them again
  route();
});
