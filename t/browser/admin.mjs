// admin.mjs: drives Debian's chromium (headless, through playwright-core) over the admin pages
// of a running stack and reports what it saw, one JSON line per observation:
// {"name": "...", "value": ...}. It decides nothing: the Perl test (t/7001-admin-pages.t)
// holds the expectations, and checks through the API what the clicks changed.
// Usage: node admin.mjs CONFIG.json   (url, org, admin, reader: tokens, out: screenshot folder,
// the names the test made: group_to, group_from, cluster, rev_a, rev_b, and limited: {token,
// groups: [a group it may not move, the one it may]})
import { driver } from './browser.mjs';

const { cfg, report, browser, newPage, problems, o, settle, signIn } = await driver({ busy: false });

async function visit(page, hash, shot) {
  await page.goto(`${cfg.url}/admin/#${hash}`);
  await settle(page);
  const seen = await page.evaluate(() => ({
    h1: (document.querySelector('main h1') || {}).textContent || '',
    cells: [...document.querySelectorAll('main tbody td')].slice(0, 12).map(td => td.textContent),
    error: (document.querySelector('main .error') || {}).textContent || '',
    xss: window.__xss || 0,
    imgs: document.querySelectorAll('main img').length,
    csp: window.__csp.slice(),
    overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
  }));
  for (const v of seen.csp) problems.push(`csp on ${hash}: ${v}`);
  if (shot) await page.screenshot({ path: `${cfg.out}/${shot}.png`, fullPage: true });
  return seen;
}


// cfg.measure: [[name, hash], ...]: the time from asking for a page to its first table rows
// on screen, three times each (reported, not judged here)
if (cfg.measure) {
  try {
    const page = await newPage();
    await signIn(page, cfg.admin);
    for (const [name, hash] of cfg.measure) {
      const times = [];
      for (let i = 0; i < 3; i++) {
        await page.goto(`${cfg.url}/admin/#/orgs`); await settle(page);
        const start = Date.now();
        await page.evaluate(h => { location.hash = h; }, hash);
        await page.waitForFunction(() => !document.querySelector('main .loading') && document.querySelector('main tbody tr td'), null, { timeout: 60000 });
        times.push(Date.now() - start);
      }
      const rows = await page.evaluate(() => document.querySelectorAll('main tbody tr').length);
      const caption = await page.evaluate(() => (document.querySelector('main caption') || {}).textContent || '');
      report(`load ${name}`, { times, rows, caption });
    }
    // cfg.group_search: [hash, text]: a group page among many groups, its "Compare with" list
    // before and after a search by name
    if (cfg.group_search) {
      const [hash, text] = cfg.group_search;
      await page.goto(`${cfg.url}/admin/#${hash}`); await settle(page);
      const options = () => page.evaluate(() => [...document.querySelectorAll('#from-group option')].map(o => o.value));
      const before = await options();
      await page.fill('#from-search', text);
      await page.waitForFunction(t => [...document.querySelectorAll('#from-group option')].slice(1).every(o => o.value.includes(t)), text);
      report('group search', { before: before.length, first: before[0], after: await options() });
    }
    report('measure problems', problems.splice(0));
  } catch (err) {
    report('driver error', String(err && err.stack || err));
  }
  await browser.close();
  process.exit(0);
}
const pages = [
  ['orgs', '/orgs'], ['policies', `/o/${o}/policies`], ['policy', `/o/${o}/policies/${cfg.policy}`],
  ['revision', `/o/${o}/policies/${cfg.policy}/${cfg.policy_rev}`], ['groups', `/o/${o}/groups`],
  ['group', `/o/${o}/groups/${cfg.group_to}?from=${cfg.group_from}`], ['nodes', `/o/${o}/nodes`], ['nodes-of-policy', `/o/${o}/nodes?group=${cfg.group_to}&policy=${cfg.policy}`],
  ['node', `/o/${o}/nodes/web1`],
  ['documents', `/o/${o}/documents`], ['document-revision', `/o/${o}/documents/${cfg.rev_b}`],
  ['rendered', `/o/${o}/documents/${cfg.rev_b}?view=rendered`], ['diff', `/o/${o}/diff/${cfg.rev_a}/${cfg.rev_b}`],
  ['clusters', `/o/${o}/clusters`], ['cluster', `/o/${o}/clusters/${cfg.cluster}`], ['members', `/o/${o}/members`],
  ['tokens', `/o/${o}/tokens`], ['events', `/o/${o}/events`], ['user', `/o/${o}/users/admin`],
  ['client', `/o/${o}/clients/${o}-validator`],
];

try {
  // ---- sign in, every page ----
  let page = await newPage();
  await page.goto(`${cfg.url}/admin/`);
  await page.waitForSelector('#token');
  await page.screenshot({ path: `${cfg.out}/signin.png` });
  await page.fill('#token', 'purser_not-a-real-token-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa');
  await page.click('form.signin button[type=submit]');
  await page.waitForSelector('form.signin .error');
  report('bad token message', await page.textContent('form.signin .error'));
  problems.splice(0); // (the browser logs the refused request itself)
  await signIn(page, cfg.admin);
  report('signed in at', await page.evaluate(() => location.hash));
  report('token in sessionStorage, not in the URL', await page.evaluate(t =>
    sessionStorage.getItem('purser.token') === t && !location.href.includes(t), cfg.admin));
  for (const [name, hash] of pages) report(`page ${name}`, await visit(page, hash, name));
  // reload keeps the page; back goes to the one before
  await page.goto(`${cfg.url}/admin/#/o/${o}/clusters`); await settle(page);
  await page.reload(); await settle(page);
  report('after reload', await page.evaluate(() => [location.hash, document.querySelector('main h1').textContent]));
  await page.goto(`${cfg.url}/admin/#/o/${o}/nodes`); await settle(page);
  await page.goBack(); await settle(page);
  report('after back', await page.evaluate(() => location.hash));
  // every control reachable by keyboard: Tab moves through links, inputs and buttons
  await page.goto(`${cfg.url}/admin/#/o/${o}/clusters`); await settle(page);
  const tabbed = new Set();
  for (let i = 0; i < 40; i++) { await page.keyboard.press('Tab'); tabbed.add(await page.evaluate(() => document.activeElement.id || document.activeElement.tagName)); }
  report('reached by Tab on clusters', [...tabbed]);
  report('inputs without a label', await page.evaluate(() => [...document.querySelectorAll('input, select')]
    .filter(el => !el.hidden && !(el.id && document.querySelector(`label[for="${el.id}"]`))).map(el => el.id || el.name)));

  // ---- promote ----
  await page.goto(`${cfg.url}/admin/#/o/${o}/groups/${cfg.group_to}?from=${cfg.group_from}`); await settle(page);
  await page.waitForSelector('#promote');
  await page.click('#promote');
  await page.waitForSelector('dialog[open]');
  report('promote asks', await page.textContent('dialog[open]'));
  await page.click('dialog[open] button.danger');
  await page.waitForFunction(() => !document.querySelector('dialog[open]'));
  await settle(page);
  await page.screenshot({ path: `${cfg.out}/promoted.png`, fullPage: true });
  // a group to compare with that is not there: its error in the comparison, the group shown
  const before = problems.length;
  await page.goto(`${cfg.url}/admin/#/o/${o}/groups/${cfg.group_to}?from=no-such-group`); await settle(page);
  await page.waitForSelector('main .error');
  report('compare with a missing group', await page.evaluate(() => ({ headings: [...document.querySelectorAll('main h1, main h2')].map(e => e.textContent),
    errors: [...document.querySelectorAll('main .error')].map(e => e.textContent), pointers: document.querySelectorAll('main table tbody tr').length })));
  problems.push(...problems.splice(before).filter(p => !/404/.test(p))); // (the missing group's own 404 is expected)

  // ---- a cluster: create, then reset its token ----
  await page.goto(`${cfg.url}/admin/#/o/${o}/clusters`); await settle(page);
  await page.fill('#newname', 'from-the-page');
  await page.fill('#newlabels', 'env=ui');
  await page.click('form.create button[type=submit]');
  await page.waitForSelector('.secret input');
  report('new cluster token', await page.inputValue('.secret input'));
  report('new cluster shown once', await page.evaluate(() => ({ labels: [...document.querySelectorAll('.secret label')].map(l => l.textContent),
    values: [...document.querySelectorAll('.secret input')].map(i => i.value), until: !!document.querySelector('main p time') })));
  report('clusters listed after a create', await page.evaluate(() =>
    [...document.querySelectorAll('main tbody tr')].map(tr => tr.cells[0].textContent)));
  await page.goto(`${cfg.url}/admin/#/o/${o}/clusters/c-from-the-page`); await settle(page);
  await page.click('#reset-token');
  await page.click('dialog[open] button.danger');
  await page.waitForSelector('.secret input');
  report('reset cluster token', await page.inputValue('.secret input'));
  report('status after a reset', await page.textContent('#cluster-status'));
  await page.screenshot({ path: `${cfg.out}/token-reset.png`, fullPage: true });

  // ---- a token: create, then revoke ----
  await page.goto(`${cfg.url}/admin/#/o/${o}/tokens`); await settle(page);
  await page.fill('#description', 'made in the browser');
  await page.click('form.create button[type=submit]');
  await page.waitForSelector('.secret input');
  const made = await page.inputValue('.secret input');
  report('new api token', made);
  const id = (await page.textContent('.secret label')).match(/Token ([0-9a-f]+)/)[1];
  await page.waitForSelector(`button[aria-label="Revoke token ${id}"]`);
  await page.click(`button[aria-label="Revoke token ${id}"]`);
  await page.click('dialog[open] button.danger');
  await page.waitForFunction(i => !document.querySelector(`button[aria-label="Revoke token ${i}"]`), id);
  report('revoked token id', id);
  report('admin problems', problems.splice(0));
  await page.context().close();

  // ---- a reader: no write controls; a forced write shows the API's 403 ----
  page = await newPage();
  await signIn(page, cfg.reader);
  const readerSaw = {};
  for (const [name, hash] of [['clusters', `/o/${o}/clusters`], ['cluster', `/o/${o}/clusters/${cfg.cluster}`],
                              ['group', `/o/${o}/groups/${cfg.group_to}?from=${cfg.group_from}`]]) {
    await visit(page, hash);
    readerSaw[name] = await page.evaluate(() => ({
      create: !!document.querySelector('form.create'), reset: !!document.querySelector('#reset-token'),
      promote: !!document.querySelector('#promote') }));
  }
  report('reader controls', readerSaw);
  report('reader problems', problems.splice(0));
  report('reader forced write', await page.evaluate(async org => {
    const { api } = await import('/admin/api.js');
    const { failure, show } = await import('/admin/dom.js');
    try { await api('POST', `/organizations/${org}/clusters`, { metadata: { name: 'forced' } }); return 'written'; }
    catch (err) { show(failure(err)); return document.querySelector('main .error').textContent; }
  }, o));
  problems.splice(0); // (the browser logs the refused request itself)
  await page.context().close();

  // ---- an operator limited to one policy group: promote offered into that group only ----
  if (cfg.limited) {
    page = await newPage();
    await signIn(page, cfg.limited.token);
    const [a, b] = cfg.limited.groups;
    const promote = {};
    for (const [into, from] of [[a, b], [b, a]]) {
      await visit(page, `/o/${o}/groups/${into}?from=${from}`);
      promote[into] = await page.evaluate(() => !!document.querySelector('#promote'));
    }
    report('limited promote', promote);
    await visit(page, `/o/${o}/members`);
    report('limited members', await page.evaluate(() =>
      [...document.querySelectorAll('main tbody tr')].map(tr => tr.textContent)));
    report('limited members linked', await page.evaluate(() =>
      [...document.querySelector('main table').querySelectorAll('tbody tr td:first-child a')].map(a => a.textContent)));
    report('limited problems', problems.splice(0));
    const deleteAsks = async p => {
      await visit(p, `/o/${o}/policies/${cfg.policy}`);
      await p.click('main tbody button[aria-label^="Delete revision"]');
      await p.waitForSelector('dialog[open]');
      const text = await p.evaluate(() => [...document.querySelectorAll('dialog[open] li')].pop().textContent);
      await p.click('dialog[open] button:not(.danger)');
      return text;
    };
    report('limited reader sees every group', await deleteAsks(page));
    await page.context().close();
    page = await newPage();
    await signIn(page, cfg.limited.operator_only);
    report('operator only, delete asks', await deleteAsks(page));
    report('operator only problems', problems.splice(0));
    await page.context().close();
  }

  // ---- a phone ----
  page = await newPage(390, 844);
  await signIn(page, cfg.admin);
  const phone = {};
  for (const [name, hash] of pages) phone[name] = (await visit(page, hash, name === 'clusters' ? 'phone-clusters' : null)).overflow;
  report('phone overflow', phone);
  report('phone problems', problems.splice(0));
  await page.context().close();
} catch (err) {
  report('driver error', String(err && err.stack || err));
} finally {
  await browser.close();
}
