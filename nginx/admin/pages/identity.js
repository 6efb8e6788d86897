// identity.js: organizations, an organization's users and clients, and the signed-in user's
// tokens (a new one shown once with a copy button; revoke asks first).
import { api, enc } from '../api.js';
import { h, paged, link, failure, secretOnce, confirmDialog, spinner } from '../dom.js';

export async function organizations(ctx) {
  const list = await api('GET', '/organizations');
  const rows = Object.keys(list || {}).sort().map(name => ({ name }));
  ctx.show(h('h1', {}, 'Organizations'), paged([
    { title: 'Organization', cell: r => link(`/o/${enc(r.name)}/policies`, r.name) },
  ], rows, `${rows.length} organizations`));
}

export async function members(ctx) {
  const users = await api('GET', `/organizations/${enc(ctx.org)}/users`);
  const clients = await api('GET', `/organizations/${enc(ctx.org)}/clients`);
  const userRows = (users || []).map(u => u.user);
  const clientRows = Object.keys(clients || {}).sort().map(name => ({ name }));
  ctx.show(h('h1', {}, 'Users and clients'),
    h('h2', {}, 'Members'), paged([
      { title: 'User', cell: u => u.username }, { title: 'Roles', cell: u => (u.roles || []).join(', ') },
    ], userRows, `${userRows.length} members`),
    h('h2', {}, 'Clients'), paged([{ title: 'Client', cell: c => c.name }], clientRows, `${clientRows.length} clients`));
}

export async function tokens(ctx) {
  const me = ctx.perms.principal;
  const path = `/users/${enc(me)}/tokens`;
  const fresh = h('div', {});
  const listHolder = h('div', {}, spinner());
  const load = async () => {
    const list = await api('GET', path);
    listHolder.replaceChildren(paged([
      { title: 'Id', cell: t => t.id }, { title: 'Description', cell: t => t.description || '' },
      { title: 'Created', cell: t => t.created_at || '' }, { title: 'Expires', cell: t => t.expires_at || 'never' },
      { title: 'Last used', cell: t => t.last_used_at || '' },
      { title: '', cell: t => h('button.danger', { type: 'button', 'aria-label': `Revoke token ${t.id}`, onclick: async () => {
        if (!await confirmDialog(`Revoke token ${t.id}?`, [t.description || '(no description)', 'Whatever uses it stops working at once.'], 'Revoke')) return;
        try { await api('DELETE', `${path}/${enc(t.id)}`); await load(); } catch (err) { fresh.replaceChildren(failure(err)); }
      } }, 'Revoke') },
    ], Array.isArray(list) ? list : (list.tokens || []), `tokens of ${me}`));
  };
  const form = h('form.create', { onsubmit: async e => {
    e.preventDefault();
    try {
      const t = await api('POST', path, { description: e.target.description.value });
      fresh.replaceChildren(secretOnce(`Token ${t.id}`, t.token));
      e.target.reset();
      await load();
    } catch (err) { fresh.replaceChildren(failure(err)); }
  } }, h('label', { for: 'description' }, 'Description'), h('input', { id: 'description', name: 'description', required: true }),
    h('button', { type: 'submit' }, 'Create a token'));
  ctx.show(h('h1', {}, `Tokens of ${me}`), form, fresh, listHolder);
  await load();
}
