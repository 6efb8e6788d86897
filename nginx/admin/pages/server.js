// server.js: what a server admin does beyond one organization (creating organizations and
// users, deleting them), and an organization's own page: its export (a download of the YAML
// stream), an import into it while it is empty, and its deletion. Each action is offered only
// when the permissions answer grants it; a destructive one asks first, naming what goes.
import { api, enc, yamlText } from '../api.js';
import { h, link, grid, failure, secretOnce, confirmDialog, when } from '../dom.js';

/** The actions the principal holds beyond an organization (create_user, create_organization,
 *  delete_user ...: no role grants them, server admins hold them): read from the permissions of
 *  the first organization it sees (one of a page, not the whole list); with none, from whether
 *  it may list every user. */
export async function serverActions() {
  const first = ((await api('GET', '/organizations?page_size=1&sort=name')).items || [])[0];
  if (first) {
    const p = await api('GET', `/organizations/${enc(first.metadata.name)}/permissions`);
    const held = p.server_admin ? p.actions : [];
    held.principal = p.principal;
    return held;
  }
  try { await api('GET', '/users?page_size=1'); return ['create_user', 'delete_user', 'list_users', 'create_organization', 'delete_organization', 'import_organization']; }
  catch { return []; }
}

/** The organizations page's create form (for who holds create_organization). */
export function createOrganization(ctx, done) {
  const result = h('div', { id: 'org-result' });
  const form = h('form.create', { id: 'add-org', onsubmit: async e => {
    e.preventDefault();
    const f = e.target, body = { name: f.orgname.value.trim() };
    if (f.fullname.value.trim()) body.full_name = f.fullname.value.trim();
    try {
      const made = await api('POST', '/organizations', body);
      window.dispatchEvent(new CustomEvent('purser:organizations'));
      f.reset();
      await done();
      document.getElementById('org-result').replaceChildren(h('p.done', { role: 'status' }, 'Created organization ', link(`/o/${enc(body.name)}/policies`, body.name), ` with its validator client ${made.clientname}.`),
        made.private_key ? secretOnce(`Private key of ${made.clientname}`, made.private_key) : null);
    } catch (err) { result.replaceChildren(failure(err)); }
  } }, h('h2', {}, 'Create an organization'),
    h('label', { for: 'orgname' }, 'Name'), h('input', { id: 'orgname', name: 'orgname', required: true, autocomplete: 'off' }),
    h('label', { for: 'fullname' }, 'Full name'), h('input', { id: 'fullname', name: 'fullname', autocomplete: 'off' }),
    h('button', { type: 'submit' }, 'Create organization'));
  return [result, form];
}

/** A server list of envelopes (page_size, page_token, sort; filter=name==... on what is typed:
 *  a pattern with *, else the names holding it, as every list's filter), for grid's load. */
export const envelopes = path => async ({ sort, q, token, size }) => {
  const params = new URLSearchParams({ page_size: size, sort: sort || 'name' });
  if (token) params.set('page_token', token);
  if (q) params.set('filter', `name==${q.includes('*') ? q : `*${q}*`}`);
  const page = await api('GET', `${path}?${params}`);
  return { items: page.items || [], next: page.next_page_token };
};

/** Every user of the server (list_users), created and deleted by who may (not oneself). */
export async function users(ctx) {
  const may = await serverActions();
  const result = h('div', { id: 'users-result' });
  const say = (...n) => result.replaceChildren(h('p.done', { role: 'status' }, ...n));
  let list;
  const form = may.includes('create_user') ? h('form.create', { id: 'add-user', onsubmit: async e => {
    e.preventDefault();
    const f = e.target, body = { username: f.newuser.value.trim() };
    if (f.displayname.value.trim()) body.display_name = f.displayname.value.trim();
    if (f.email.value.trim()) body.email = f.email.value.trim();
    try {
      const made = await api('POST', '/users', body);
      f.reset();
      list.ready = list.reload();
      say(`Created user ${body.username}.`);
      if (made && made.private_key) result.append(secretOnce(`Private key of ${body.username}`, made.private_key));
    } catch (err) { result.replaceChildren(failure(err)); }
  } }, h('h2', {}, 'Create a user'),
    h('label', { for: 'newuser' }, 'User name'), h('input', { id: 'newuser', name: 'newuser', required: true, autocomplete: 'off' }),
    h('label', { for: 'displayname' }, 'Display name'), h('input', { id: 'displayname', name: 'displayname', autocomplete: 'off' }),
    h('label', { for: 'email' }, 'Email'), h('input', { id: 'email', name: 'email', type: 'email', autocomplete: 'off' }),
    h('button', { type: 'submit' }, 'Create user')) : null;
  const remove = u => h('button.danger', { type: 'button', 'aria-label': `Delete user ${u}`, onclick: async () => {
    if (!await confirmDialog(`Delete user ${u}?`, [`${u} leaves every organization it is a member of.`, 'Its keys and tokens stop working at once.',
      'What it uploaded stays.'], 'Delete')) return;
    try { await api('DELETE', `/users/${enc(u)}`); say(`User ${u} deleted.`); list.ready = list.reload(); }
    catch (err) { result.replaceChildren(failure(err)); }
  } }, 'Delete');
  list = grid(ctx, { noun: 'users', load: envelopes('/users'), sort: 'name', filter: { label: 'User name', placeholder: 'ali or ali*' }, columns: [
    { title: 'User', sort: 'name', cell: u => u.metadata.name },
    { title: 'Display name', cell: u => (u.status || {}).display_name || (u.spec || {}).display_name || '' },
    { title: 'Active', cell: u => (u.spec || {}).active === false ? 'no' : 'yes' },
    { title: 'Created', sort: 'created_at', cell: u => when(u.metadata.created_at) },
    ...(may.includes('delete_user') ? [{ title: 'Actions', cell: u => u.metadata.name === may.principal ? 'you' : remove(u.metadata.name) }] : []),
  ] });
  ctx.show(h('h1', {}, 'Users of the server'), link('/orgs', '← organizations'), result, list, form);
  await list.ready;
}

const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** An organization's own page: export, import (into an empty one), delete. */
export async function organization(ctx) {
  const o = enc(ctx.org), path = `/organizations/${o}`;
  const title = h('h1', {}, `Organization ${ctx.org}`);
  ctx.context(title);
  const org = await api('GET', path);
  const result = h('div', { id: 'org-page-result' });
  const say = (...n) => result.replaceChildren(h('div.done', { role: 'status' }, ...n));
  const fail = err => result.replaceChildren(failure(err));
  const secrets = ctx.can('read_encrypted_document') ? h('span', {}, h('input', { type: 'checkbox', id: 'export-secrets' }),
    h('label', { for: 'export-secrets' }, 'with encrypted documents\' data (keep the file safe)')) : null;
  const exporter = ctx.can('export_organization') ? h('form.create', { id: 'export', onsubmit: async e => {
    e.preventDefault();
    const withSecrets = !!(secrets && document.getElementById('export-secrets').checked);
    try {
      const text = await yamlText(`${path}/export${withSecrets ? '?secrets=true' : ''}`);
      const url = URL.createObjectURL(new Blob([text], { type: 'application/x-yaml' }));
      const a = h('a', { href: url, download: `${ctx.org}.yaml` });
      document.body.append(a); a.click(); a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10000);
      const count = (text.match(/^---/mg) || []).length;
      say(`Exported ${plural(count, 'resource')} of ${ctx.org} to ${ctx.org}.yaml${withSecrets ? ', encrypted documents\' data included' : ' (encrypted documents without their data)'}.`);
    } catch (err) { fail(err); }
  } }, h('h2', {}, 'Export'), h('p', {}, 'Everything of the organization as one YAML stream (never a token or a private key).'),
    secrets, h('button', { type: 'submit' }, 'Download the export')) : null;
  const importer = ctx.can('import_organization') ? h('form.create', { id: 'import', onsubmit: async e => {
    e.preventDefault();
    const file = e.target.importfile.files[0];
    if (!file) return;
    if (!await confirmDialog(`Import ${file.name} into ${ctx.org}?`, ['Every resource of the file is written into this organization, all or nothing.',
      'The organization must be empty: one holding more than its validator and members refuses it.'], 'Import')) return;
    try {
      const done = await api('POST', `${path}/import`, await file.text(), { contentType: 'application/x-yaml' });
      const counts = Object.entries((done && done.imported) || {});
      say(h('p', {}, `Imported ${file.name} into ${ctx.org}:`), h('ul', {}, counts.map(([k, v]) => h('li', {}, `${k}: ${typeof v === 'object' ? JSON.stringify(v) : v}`))));
      e.target.reset();
    } catch (err) { fail(err); }
  } }, h('h2', {}, 'Import'), h('p', {}, 'An export\'s YAML stream, written into this organization while it is empty.'),
    h('label', { for: 'importfile' }, 'File'), h('input', { id: 'importfile', name: 'importfile', type: 'file', accept: '.yaml,.yml,application/x-yaml', required: true }),
    h('button', { type: 'submit' }, 'Import')) : null;
  const deleter = ctx.can('delete_organization') ? h('button.danger', { type: 'button', id: 'delete-org', onclick: async () => {
    if (!await confirmDialog(`Delete organization ${ctx.org}?`, ['Its validator client and its memberships go with it.',
      'One holding more is refused, and what it holds is listed before anything goes.'], 'Delete')) return;
    let force = false;
    for (;;) {
      try {
        await api('DELETE', `${path}${force ? '?force=true' : ''}`);
        window.dispatchEvent(new CustomEvent('purser:organizations'));
        ctx.show(title, h('p.done', { role: 'status' }, `Organization ${ctx.org} deleted${force ? ' with everything in it' : ''}. `), link('/orgs', '← organizations'));
        return;
      } catch (err) {
        const held = err.status === 409 && err.body && err.body.contents;
        if (!held || force) return fail(err);
        if (!await confirmDialog(`${ctx.org} is not empty: delete it with everything in it?`,
          [...Object.entries(held).map(([k, v]) => `${v} × ${k}`), 'None of it can be brought back but from an export.'], 'Delete everything')) return fail(err);
        force = true;
      }
    }
  } }, `Delete organization ${ctx.org}`) : null;
  ctx.show(title, link('/orgs', '← organizations'), result,
    h('p', {}, org.full_name ? `Full name: ${org.full_name}` : ''),
    exporter, importer, deleter, !exporter && !importer && !deleter ? h('p', {}, 'Nothing here is yours to change.') : null);
}

// The pages this module serves (app.js routes them; lib/registry names this module as theirs).
export const pages = [['/o/:org/organization', organization], ['/users', users]];
