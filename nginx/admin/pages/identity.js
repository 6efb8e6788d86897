// identity.js: organizations, an organization's users (members, with their roles) and clients,
// a user's or client's page, and the signed-in user's tokens. What the signed-in principal may do
// is offered, nothing more: add a member or change its roles, remove one, create a client (its
// key shown once), delete one, disable or enable a user or client, add a key to it (the
// server's pair, its private key shown once, or a public key) or delete one, create a token
// with an expiry (shown once), revoke one; each destructive one asks first, and each says what
// it did.
import { api, enc } from '../api.js';
import { h, table, link, grid, failure, secretOnce, confirmDialog, destroy, when } from '../dom.js';
import { yaml } from '../diff.js';
import { serverActions, createOrganization, envelopes } from './server.js';

// The actions of an organization's own page (server.js organization): its settings link is
// offered only where the principal holds one, and a server admin holds them everywhere.
const orgPageActions = ['export_organization', 'import_organization', 'delete_organization'];
const settingsLink = (may, name) => {
  const to = () => link(`/o/${enc(name)}/organization`, 'settings');
  if (may.includes('delete_organization')) return to();
  const cell = h('span', {});
  api('GET', `/organizations/${enc(name)}/permissions`)
    .then(p => { if (orgPageActions.some(a => (p.actions || []).includes(a))) cell.replaceChildren(to()); })
    .catch(() => {}); // (no link where the permissions cannot be read)
  return cell;
};

export async function organizations(ctx) {
  const may = await serverActions();
  const orgs = grid(ctx, { noun: 'organizations', load: envelopes('/organizations'), sort: 'name',
    filter: { label: 'Organization name', placeholder: 'acme or ac*' }, columns: [
      { title: 'Organization', sort: 'name', cell: r => link(`/o/${enc(r.metadata.name)}/policies`, r.metadata.name) },
      { title: 'Full name', cell: r => (r.spec || {}).full_name || '' },
      { title: 'Export, import, delete', cell: r => settingsLink(may, r.metadata.name) },
    ] });
  ctx.show(h('h1', {}, 'Organizations'), may.includes('list_users') ? h('p', {}, link('/users', 'Users of the server')) : null, orgs,
    may.includes('create_organization') ? createOrganization(ctx, () => organizations(ctx)) : null);
  await orgs.ready;
}

const rolesText = m => (m.spec.roles || []).map(r =>
  (m.spec.policy_groups || {})[r] ? `${r} (policy groups ${m.spec.policy_groups[r].join(', ')})` : r).join(', ');

export async function members(ctx) {
  const o = enc(ctx.org), path = `/organizations/${o}`;
  // the roles the RBAC policy marks for people (GET .../permissions: people_roles), not the
  // machines' (node, validator, cluster); a member holding one is asked before it is taken away
  const described = ctx.perms.roles;
  const roles = ctx.perms.people_roles || [];
  const result = h('div', { id: 'member-result' });
  const report = (...nodes) => result.replaceChildren(h('p.done', { role: 'status' }, ...nodes));
  let users, clients;
  const reload = () => { users.ready = users.reload(); clients.ready = clients.reload(); };
  // POST .../users grants roles and never takes one away: a role unticked is taken away by
  // removing the membership and adding it again with the roles chosen, after a confirmation
  // (not on oneself, who would lose the right to add it back half-way)
  const rolesNow = async user => {
    const q = new URLSearchParams({ page_size: 1, filter: `name==${user}` });
    const m = ((await api('GET', `${path}/users?${q}`)).items || [])[0];
    return m ? m.spec.roles || [] : null;
  };
  const memberForm = ctx.can('write_members') ? h('form.create', { id: 'add-member', onsubmit: async e => {
    e.preventDefault();
    const f = e.target, chosen = roles.filter(r => f[`role-${r}`].checked);
    const limit = f.groups.value.split(',').map(s => s.trim()).filter(Boolean);
    const body = { username: f.username.value.trim(), roles: chosen.length ? chosen : ['reader'] };
    // the limits the member's other roles had (read by Edit roles) stay with them
    const kept = JSON.parse(f.dataset.kept || '{}');
    for (const r of body.roles) if (r !== 'operator' && kept[r]) (body.policy_groups ||= {})[r] = kept[r];
    if (limit.length && body.roles.includes('operator')) (body.policy_groups ||= {}).operator = limit;
    try {
      const before = await rolesNow(body.username);
      const lost = (before || []).filter(r => !body.roles.includes(r));
      if (lost.length) {
        if (body.username === ctx.perms.principal && !ctx.perms.server_admin)
          return result.replaceChildren(failure({ message: `You cannot take your own role${lost.length > 1 ? 's' : ''} ${lost.join(', ')} away here: another admin can.` }));
        if (!await confirmDialog(`Take ${lost.join(', ')} away from ${body.username}?`, [`${body.username} keeps ${body.roles.join(', ')}.`,
          'The API takes a role away only with the membership: it is removed and added again at once with the roles chosen.'], 'Take away')) return;
        await api('DELETE', `${path}/users/${enc(body.username)}`);
      }
      try { await api('POST', `${path}/users`, body); }
      catch (err) { if (lost.length) err.message += ` (${body.username} was removed and not added again: it held ${before.join(', ')})`; throw err; }
      const now = await rolesNow(body.username);
      report(`${body.username} is a member with roles ${(now || body.roles).join(', ')}.`);
      f.reset(); delete f.dataset.kept; reload();
    } catch (err) { result.replaceChildren(failure(err)); }
  } }, h('h2', {}, 'Add a member or change its roles'),
    h('label', { for: 'username' }, 'User'), h('input', { id: 'username', name: 'username', required: true, autocomplete: 'off',
      oninput: e => delete e.target.form.dataset.kept }),
    h('fieldset.roles', {}, h('legend', {}, 'Roles'), roles.map(r => h('span', {},
      h('input', { type: 'checkbox', id: `role-${r}`, name: `role-${r}`, checked: r === 'reader' }),
      h('label', { for: `role-${r}`, title: described[r] || null }, r)))),
    h('label', { for: 'groups' }, 'Operator only on policy groups (patterns, optional)'), h('input', { id: 'groups', name: 'groups', placeholder: 'dev-*, staging' }),
    h('button', { type: 'submit' }, 'Save member')) : null;
  const clientForm = ctx.can('create_client') ? h('form.create', { id: 'add-client', onsubmit: async e => {
    e.preventDefault();
    const name = e.target.clientname.value.trim();
    try {
      const made = await api('POST', `${path}/clients`, { name });
      result.replaceChildren(h('div', {}, h('p.done', { role: 'status' }, 'Created client ', link(`/o/${o}/clients/${enc(name)}`, name), '.'),
        made.private_key ? secretOnce(`Private key of ${name}`, made.private_key) : null));
      e.target.reset(); reload();
    } catch (err) { result.replaceChildren(failure(err)); }
  } }, h('h2', {}, 'Create a client'),
    h('label', { for: 'clientname' }, 'Name'), h('input', { id: 'clientname', name: 'clientname', required: true, autocomplete: 'off' }),
    h('button', { type: 'submit' }, 'Create client')) : null;
  const remove = (what, name, lines, url, verb) => h('button.danger', { type: 'button', 'aria-label': `${verb} ${what} ${name}`, onclick: async () => {
    if (!await confirmDialog(`${verb} ${what} ${name}?`, lines, verb)) return;
    try { await api('DELETE', url); report(`${what[0].toUpperCase()}${what.slice(1)} ${name}: ${verb.toLowerCase()}d.`); reload(); }
    catch (err) { result.replaceChildren(failure(err)); }
  } }, verb);
  users = grid(ctx, { key: 'u', noun: 'members', load: envelopes(`${path}/users`), sort: 'name', filter: { label: 'User name', placeholder: 'ali or ali*' }, columns: [
    // a user's page is a server admin's (read_user) or the user's own: others see the name alone
    { title: 'User', sort: 'name', cell: m => ctx.can('read_user') || m.metadata.name === ctx.perms.principal
      ? link(`/o/${o}/users/${enc(m.metadata.name)}`, m.metadata.name) : m.metadata.name },
    { title: 'Roles here', cell: rolesText },
    { title: 'Display name', cell: m => (m.status || {}).display_name || '' },
    ...(ctx.can('write_members') ? [{ title: 'Actions', cell: m => [
      h('button', { type: 'button', 'aria-label': `Edit roles of ${m.metadata.name}`, onclick: () => {
        const f = document.getElementById('add-member');
        f.username.value = m.metadata.name;
        for (const r of roles) f[`role-${r}`].checked = (m.spec.roles || []).includes(r);
        f.groups.value = ((m.spec.policy_groups || {}).operator || []).join(', ');
        f.dataset.kept = JSON.stringify(m.spec.policy_groups || {});
        f.scrollIntoView({ block: 'nearest' });
        f.username.focus();
      } }, 'Edit roles'), ' ',
      remove('member', m.metadata.name, ['They lose every role in this organization at once.', 'The user itself and its tokens stay.'],
        `${path}/users/${enc(m.metadata.name)}`, 'Remove')] }] : []),
  ] });
  clients = grid(ctx, { key: 'c', noun: 'clients', load: envelopes(`${path}/clients`), sort: 'name', filter: { label: 'Client name', placeholder: 'ci or ci-*' }, columns: [
    { title: 'Client', sort: 'name', cell: c => link(`/o/${o}/clients/${enc(c.metadata.name)}`, c.metadata.name) },
    { title: 'Validator', cell: c => (c.spec || {}).validator ? 'yes' : 'no' },
    { title: 'Active', cell: c => (c.spec || {}).active === false ? 'no (disabled)' : 'yes' },
    { title: 'Created', sort: 'created_at', cell: c => when(c.metadata.created_at) },
    ...(ctx.can('delete_client') ? [{ title: 'Actions', cell: c => remove('client', c.metadata.name,
      ['Its keys and tokens stop working at once.', 'A node using it can no longer check in.'],
      `${path}/clients/${enc(c.metadata.name)}`, 'Delete') }] : []),
  ] });
  ctx.show(h('h1', {}, 'Users and clients'), result, h('h2', {}, 'Members'), users, memberForm,
    h('h2', {}, 'Clients'), clients, clientForm);
  await Promise.all([users.ready, clients.ready]);
}

/** A user or a client: its profile and its public keys; for who may change it, its active flag
 *  (a disabled one's keys and tokens are refused) and a new key (a pair made by the server,
 *  its private key shown once, or a public key given). */
export async function principal(ctx, kind) {
  const { name } = ctx.params;
  const path = kind === 'users' ? `/users/${enc(name)}` : `/organizations/${enc(ctx.org)}/clients/${enc(name)}`;
  const noun = kind === 'users' ? 'User' : 'Client';
  ctx.context(h('h1', {}, `${noun} ${name}`), link(`/o/${enc(ctx.org)}/members`, '← users and clients'));
  const who = await api('GET', path);
  const keys = await api('GET', `${path}/keys`);
  const may = ctx.can(kind === 'users' ? 'update_user' : 'update_client');
  const fields = Object.entries(who || {}).filter(([, v]) => typeof v !== 'object' || v === null)
    .map(([k, v]) => [k, v === null ? '' : String(v)]);
  const result = h('div', { id: 'principal-result' });
  const again = async (...said) => { await principal(ctx, kind); document.getElementById('principal-result').replaceChildren(h('p.done', { role: 'status' }, ...said)); };
  const fail = err => document.getElementById('principal-result').replaceChildren(failure(err));
  // Chef's client answer leaves out active: a client's is read from its envelope
  let on = who.active !== false;
  if (typeof who.active !== 'boolean') {
    const q = new URLSearchParams({ page_size: 1, filter: `name==${name}` });
    const env = ((await api('GET', `/organizations/${enc(ctx.org)}/clients?${q}`)).items || [])[0];
    on = !env || (env.spec || {}).active !== false;
  }
  // not oneself: a disabled user's own tab would be refused at once, with no way back here
  const toggle = may && !(kind === 'users' && name === ctx.perms.principal) ? h('button', { type: 'button', id: 'toggle-active', class: on ? 'danger' : null, onclick: async () => {
    if (on && !await confirmDialog(`Disable ${noun.toLowerCase()} ${name}?`, ['Requests signed with its keys or made with its tokens are refused until it is enabled again.',
      'Nothing of it is deleted.'], 'Disable')) return;
    try { await api('PATCH', path, { active: !on }); await again(`${noun} ${name} ${on ? 'disabled: its keys and tokens are refused until it is enabled again' : 'enabled'}.`); }
    catch (err) { fail(err); }
  } }, on ? `Disable ${name}` : `Enable ${name}`) : null;
  const keyForm = may ? h('form.create', { id: 'add-key', onsubmit: async e => {
    e.preventDefault();
    const f = e.target, body = { name: f.keyname.value.trim() };
    body.expiration_date = f.expiration.value ? `${f.expiration.value}T00:00:00Z` : 'infinity';
    if (f.publickey.value.trim()) body.public_key = f.publickey.value.trim(); else body.create_key = true;
    try {
      const made = await api('POST', `${path}/keys`, body);
      await again(`Key ${body.name} added to ${name}.`);
      if (made && made.private_key) document.getElementById('principal-result').append(secretOnce(`Private key ${body.name} of ${name}`, made.private_key));
    } catch (err) { fail(err); }
  } }, h('h2', {}, 'Add a key'),
    h('label', { for: 'keyname' }, 'Name'), h('input', { id: 'keyname', name: 'keyname', required: true, autocomplete: 'off' }),
    h('label', { for: 'expiration' }, 'Expires (optional)'), h('input', { id: 'expiration', name: 'expiration', type: 'date' }),
    h('label', { for: 'publickey' }, 'Public key (PEM; empty: the server makes a pair and shows its private key once)'),
    h('textarea', { id: 'publickey', name: 'publickey', rows: 3 }),
    h('button', { type: 'submit' }, 'Add key')) : null;
  ctx.show(h('h1', {}, `${noun} ${name}`),
    link(`/o/${enc(ctx.org)}/members`, '← users and clients'),
    h('p', {}, on ? 'Active.' : 'Disabled: its keys and tokens are refused.', ' ', toggle),
    result,
    table([{ title: 'Field', cell: r => r[0] }, { title: 'Value', cell: r => r[1] }], fields),
    h('h2', {}, 'Labels'), h('pre.yaml', {}, yaml(who.labels || {})),
    h('h2', {}, 'Public keys'),
    table([{ title: 'Key', cell: k => k.name }, { title: 'Expired', cell: k => k.expired ? 'yes' : 'no' },
      ...(may ? [{ title: 'Actions', cell: k => destroy({
        label: 'Delete', aria: `Delete key ${k.name}`, title: `Delete key ${k.name} of ${name}?`,
        lines: ['Requests signed with it are refused at once.', 'Its other keys and its tokens keep working.'],
        run: () => api('DELETE', `${path}/keys/${enc(k.name)}`),
        done: () => again(`Key ${k.name} deleted.`), fail }) }] : [])],
      Array.isArray(keys) ? keys : []),
    keyForm);
}

const lifetimes = [['', 'never expires'], [3600, '1 hour'], [86400, '1 day'], [7 * 86400, '7 days'], [30 * 86400, '30 days'], [90 * 86400, '90 days'], [365 * 86400, '1 year']];

export async function tokens(ctx) {
  const me = ctx.perms.principal;
  const path = `/users/${enc(me)}/tokens`;
  const fresh = h('div', {});
  let list;
  const revoke = t => h('button.danger', { type: 'button', 'aria-label': `Revoke token ${t.metadata.name}`, onclick: async () => {
    const id = t.metadata.name;
    if (!await confirmDialog(`Revoke token ${id}?`, [(t.spec || {}).description || '(no description)', 'Whatever uses it stops working at once.',
      'If it is the token this tab signed in with, this tab is signed out too.'], 'Revoke')) return;
    try {
      await api('DELETE', `${path}/${enc(id)}`);
      fresh.replaceChildren(h('p.done', { role: 'status' }, `Token ${id} revoked.`));
      list.ready = list.reload();
    } catch (err) { fresh.replaceChildren(failure(err)); }
  } }, 'Revoke');
  // disabled (refused until enabled again) or enabled: a PATCH of active, conditional on the
  // revision the list read
  const toggle = t => {
    const id = t.metadata.name, on = (t.spec || {}).active !== false;
    return h('button', { type: 'button', 'aria-label': `${on ? 'Disable' : 'Enable'} token ${id}`, onclick: async () => {
      try {
        await api('PATCH', `${path}/${enc(id)}`, { active: !on }, { headers: { 'If-Match': `"${t.metadata.revision}"` } });
        fresh.replaceChildren(h('p.done', { role: 'status' }, `Token ${id} ${on ? 'disabled: refused until enabled again' : 'enabled'}.`));
        list.ready = list.reload();
      } catch (err) { fresh.replaceChildren(failure(err)); }
    } }, on ? 'Disable' : 'Enable');
  };
  list = grid(ctx, { noun: 'tokens', load: envelopes(path), sort: '-created_at', filter: null, columns: [
    { title: 'Id', sort: 'name', cell: t => t.metadata.name }, { title: 'Description', cell: t => (t.spec || {}).description || '' },
    // a sign-in's session (made by signing in through a provider): revoking it ends that session
    { title: 'Kind', cell: t => (t.status || {}).session ? `session (${t.status.session.provider})` : 'token' },
    { title: 'Created', sort: 'created_at', cell: t => when(t.metadata.created_at) }, { title: 'Expires', cell: t => when(t.metadata.expires, 'never') },
    { title: 'Last used', cell: t => when((t.status || {}).last_used_at, 'never') },
    { title: 'Active', cell: t => (t.spec || {}).active === false ? 'no (disabled)' : 'yes' },
    { title: 'Actions', cell: t => [toggle(t), ' ', revoke(t)] },
  ] });
  const form = h('form.create', { onsubmit: async e => {
    e.preventDefault();
    const body = { description: e.target.description.value };
    if (e.target.lifetime.value) body.expires_in = Number(e.target.lifetime.value);
    try {
      const t = await api('POST', path, body);
      fresh.replaceChildren(secretOnce(`Token ${t.id}`, t.token),
        h('p.done', { role: 'status' }, t.expires_at ? ['Expires ', when(t.expires_at), '.'] : 'It never expires: revoke it when it is no longer needed.'));
      e.target.reset();
      list.ready = list.reload();
    } catch (err) { fresh.replaceChildren(failure(err)); }
  } }, h('label', { for: 'description' }, 'Description'), h('input', { id: 'description', name: 'description', required: true }),
    h('label', { for: 'lifetime' }, 'Expires'), h('select', { id: 'lifetime', name: 'lifetime' },
      lifetimes.map(([v, text]) => h('option', { value: v, selected: v === 30 * 86400 }, text === 'never expires' ? text : `in ${text}`))),
    h('button', { type: 'submit' }, 'Create a token'));
  ctx.show(h('h1', {}, `Tokens of ${me}`), form, fresh, list);
  await list.ready;
}

// The pages this module serves (app.js routes them; lib/registry names this module as theirs).
export const pages = [
  ['/o/:org/members', members], ['/o/:org/users/:name', ctx => principal(ctx, 'users')],
  ['/o/:org/clients/:name', ctx => principal(ctx, 'clients')], ['/o/:org/tokens', tokens],
  ['/orgs', organizations],
];
