// identity.js: organizations, an organization's users and clients, and the signed-in user's
// tokens (a new one shown once with a copy button; revoke asks first).
import { api, enc } from '../api.js';
import { h, paged, table, link, filtered, failure, secretOnce, confirmDialog, spinner, pre, when } from '../dom.js';

export async function organizations(ctx) {
  const list = await api('GET', '/organizations');
  const rows = Object.keys(list || {}).sort().map(name => ({ name }));
  ctx.show(h('h1', {}, 'Organizations'), filtered(ctx, [
    { title: 'Organization', cell: r => link(`/o/${enc(r.name)}/policies`, r.name) },
  ], rows, 'organizations', r => r.name));
}

export async function members(ctx) {
  const users = await api('GET', `/organizations/${enc(ctx.org)}/users`);
  const clients = await api('GET', `/organizations/${enc(ctx.org)}/clients`);
  const rows = [
    ...(users || []).map(u => ({ kind: 'user', name: u.user.username, roles: (u.user.roles || []).map(r =>
      (u.user.policy_groups || {})[r] ? `${r} (policy groups ${u.user.policy_groups[r].join(', ')})` : r).join(', ') })),
    ...Object.keys(clients || {}).sort().map(name => ({ kind: 'client', name, roles: '' })),
  ];
  ctx.show(h('h1', {}, 'Users and clients'), filtered(ctx, [
    { title: 'Name', cell: r => link(`/o/${enc(ctx.org)}/${r.kind}s/${enc(r.name)}`, r.name) },
    { title: 'Kind', cell: r => r.kind }, { title: 'Roles here', cell: r => r.roles },
  ], rows, 'users and clients', r => `${r.name} ${r.kind} ${r.roles}`));
}

/** A user or a client: its profile and its public keys. */
export async function principal(ctx, kind) {
  const { name } = ctx.params;
  const path = kind === 'users' ? `/users/${enc(name)}` : `/organizations/${enc(ctx.org)}/clients/${enc(name)}`;
  ctx.context(h('h1', {}, `${kind === 'users' ? 'User' : 'Client'} ${name}`), link(`/o/${enc(ctx.org)}/members`, '← users and clients'));
  const who = await api('GET', path);
  const keys = await api('GET', `${path}/keys`);
  const fields = Object.entries(who || {}).filter(([, v]) => typeof v !== 'object' || v === null)
    .map(([k, v]) => [k, v === null ? '' : String(v)]);
  ctx.show(h('h1', {}, `${kind === 'users' ? 'User' : 'Client'} ${name}`),
    link(`/o/${enc(ctx.org)}/members`, '← users and clients'),
    table([{ title: 'Field', cell: r => r[0] }, { title: 'Value', cell: r => r[1] }], fields),
    h('h2', {}, 'Labels'), pre(who.labels || {}),
    h('h2', {}, 'Public keys'),
    table([{ title: 'Key', cell: k => k.name }, { title: 'Expired', cell: k => k.expired ? 'yes' : 'no' }],
      Array.isArray(keys) ? keys : []));
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
      { title: 'Created', cell: t => when(t.created_at) }, { title: 'Expires', cell: t => when(t.expires_at, 'never') },
      { title: 'Last used', cell: t => when(t.last_used_at, 'never') },
      { title: '', cell: t => h('button.danger', { type: 'button', 'aria-label': `Revoke token ${t.id}`, onclick: async () => {
        if (!await confirmDialog(`Revoke token ${t.id}?`, [t.description || '(no description)', 'Whatever uses it stops working at once.',
          'If it is the token this tab signed in with, this tab is signed out too.'], 'Revoke')) return;
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
