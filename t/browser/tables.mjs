// tables.mjs: drives Debian's chromium over the admin pages for t/7005-admin-tables.t (issue
// 38): the one table component (sort, pages, filter) on the nodes list, a node's page, a
// cluster edited and deleted, members and clients managed, a token with an expiry, the events
// page's first request and links, and the phone layout. It reports what it saw, one JSON line
// each ({"name", "value"}), and decides nothing: the Perl test holds the expectations.
// Usage: node tables.mjs CONFIG.json (url, org, admin, out)
import { driver } from './browser.mjs';

const { cfg, report, browser, newPage, problems, o, settle, signIn, visit } = await driver();
const table = page => page.evaluate(() => ({
  caption: (document.querySelector('main caption') || {}).textContent || '',
  first: [...(document.querySelector('main tbody tr') || { cells: [] }).cells].map(td => td.textContent),
  names: [...document.querySelectorAll('main tbody tr')].map(tr => tr.cells[0].textContent),
  sort: [...document.querySelectorAll('main th[aria-sort]')].map(th => [th.textContent.replace(/[▲▼↕]/g, '').trim(), th.getAttribute('aria-sort')]),
  hash: location.hash,
}));
const clickAndSettle = async (page, selector) => { await page.click(selector); await settle(page); };
const confirm = async page => { await page.waitForSelector('dialog[open]'); const t = await page.textContent('dialog[open]'); await page.click('dialog[open] button.danger'); return t; };

try {
  const page = await newPage();
  await signIn(page, cfg.admin);

  // ---- the nodes list: pages, sort, filter ----
  await visit(page, `/o/${o}/nodes`);
  report('nodes first page', await table(page));
  report('nodes time column', await page.evaluate(() => {
    const t = document.querySelector('main tbody tr td:last-child time');
    return { title: [...document.querySelectorAll('main thead th')].pop().textContent, datetime: t && t.getAttribute('datetime') };
  }));
  await page.screenshot({ path: `${cfg.out}/nodes.png` });
  await clickAndSettle(page, 'main nav.pager button[rel=next]');
  report('nodes next page', await table(page));
  await clickAndSettle(page, 'main nav.pager button[rel=prev]');
  report('nodes previous page', await table(page));
  await clickAndSettle(page, 'main th[aria-sort] button.sort');
  report('nodes sorted by name, descending', await table(page));
  await page.reload(); await settle(page);
  report('nodes sort after a reload', await table(page));
  await page.fill('main input[type=search]', 'web01');
  await page.waitForFunction(() => /of \d+ nodes/.test(document.querySelector('main caption').textContent) && document.querySelectorAll('main tbody tr').length < 100);
  await settle(page);
  report('nodes filtered', await table(page));
  // the page shown is kept in the address: a node opened from page 2, then Back, is page 2 again
  await visit(page, `/o/${o}/nodes`);
  await clickAndSettle(page, 'main nav.pager button[rel=next]');
  const hashOnPage2 = await page.evaluate(() => location.hash);
  await page.click('main tbody tr:first-child a'); await settle(page);
  await page.goBack(); await settle(page);
  await page.waitForFunction(() => document.querySelector('main caption'));
  const backTo = (await table(page)).caption;
  await clickAndSettle(page, 'main nav.pager button[rel=prev]');
  report('page in the address', { hashOnPage2, backTo, previous: (await table(page)).caption, hashOnPage1: await page.evaluate(() => location.hash) });
  // by keyboard: the focus stays on the control used once the table is rebuilt
  await visit(page, `/o/${o}/nodes`);
  const focused = () => page.evaluate(() => { const a = document.activeElement; return a ? `${a.tagName} ${a.dataset.sort || a.getAttribute('rel') || a.getAttribute('aria-label') || a.textContent.trim()}` : ''; });
  await page.focus('main nav.pager button[rel=next]'); await page.keyboard.press('Enter'); await settle(page);
  const afterNext = await focused();
  await page.focus('main th[aria-sort] button.sort'); await page.keyboard.press('Enter'); await settle(page);
  const afterSort = await focused();
  await visit(page, `/o/${o}/nodes/web008`);
  await page.focus('#delete-node'); const opener = await focused();
  await page.keyboard.press('Enter'); await page.waitForSelector('dialog[open]');
  await page.keyboard.press('Escape'); await page.waitForFunction(() => !document.querySelector('dialog'));
  report('keyboard focus', { afterNext, afterSort, opener, afterDialog: await focused() });
  await visit(page, `/o/${o}/nodes?group=dev`);
  report('nodes of group dev', await table(page));

  // ---- the policies and groups lists: pages asked of the server, sorted, filtered ----
  const listAsked = [];
  const onList = r => { const m = r.url().match(/\/(policies|policy_groups)\?(.*)$/); if (m) listAsked.push(`${m[1]}?${decodeURIComponent(m[2])}`); };
  page.on('request', onList);
  await visit(page, `/o/${o}/policies`);
  report('policies list', await table(page));
  await clickAndSettle(page, 'main th:nth-child(2) button.sort');
  await clickAndSettle(page, 'main th:nth-child(2) button.sort');
  report('policies by revisions, descending', await table(page));
  await page.fill('main input[type=search]', 'we');
  await page.waitForFunction(() => document.querySelectorAll('main tbody tr').length === 1);
  await settle(page);
  report('policies filtered', await table(page));
  await visit(page, `/o/${o}/groups`);
  report('groups list', await table(page));
  await clickAndSettle(page, 'main th:nth-child(2) button.sort');
  report('groups by policies', await table(page));
  await page.fill('main input[type=search]', 'p*');
  await page.waitForFunction(() => document.querySelectorAll('main tbody tr').length === 1);
  await settle(page);
  report('groups filtered', await table(page));
  page.off('request', onList);
  report('lists asked', listAsked);

  // ---- a node's page ----
  await visit(page, `/o/${o}/nodes/web007`);
  report('node page', await page.evaluate(() => document.querySelector('main').textContent));
  await page.screenshot({ path: `${cfg.out}/node.png`, fullPage: true });
  await page.click('#delete-node');
  report('node delete asks', await confirm(page));
  await page.waitForSelector('main .done');
  report('node delete says', await page.textContent('main .done'));

  // ---- a cluster: edited, then deleted ----
  await visit(page, `/o/${o}/clusters/c-edit-me`);
  await page.fill('#editdisplay', 'Edited in the browser');
  await page.fill('#editlabels', 'env=staging, team=ops');
  await page.fill('#editdescription', 'a description');
  await page.click('#edit-cluster button[type=submit]');
  await page.waitForSelector('#cluster-result .done');
  report('cluster edit says', await page.textContent('#cluster-result'));
  await page.click('#delete-cluster');
  report('cluster delete asks', await confirm(page));
  // (the edit's "Saved" is still on the page until the delete's answer replaces it: waited for,
  // up to 15 s, then the newest message reported)
  await page.waitForFunction(() => [...document.querySelectorAll('main .done')].some(e => /deleted/.test(e.textContent)), null, { timeout: 15000 }).catch(() => null);
  report('cluster delete says', await page.evaluate(() => [...document.querySelectorAll('main .done')].map(e => e.textContent).pop()));

  // ---- members and clients ----
  await visit(page, `/o/${o}/members`);
  await page.fill('#username', 'tb-user');
  await page.check('#role-operator');
  await page.fill('#groups', 'dev-*');
  await page.click('#add-member button[type=submit]');
  await page.waitForSelector('#member-result .done');
  report('member added says', await page.textContent('#member-result'));
  await settle(page);
  report('member row', await page.evaluate(() => [...document.querySelectorAll('main tbody tr')].map(tr => tr.textContent).filter(t => t.includes('tb-user'))));
  await page.click('button[aria-label="Edit roles of tb-user"]');
  report('member edit prefills', await page.evaluate(() => ({ user: document.getElementById('username').value,
    operator: document.getElementById('role-operator').checked, groups: document.getElementById('groups').value })));
  await page.uncheck('#role-operator');
  await page.click('#add-member button[type=submit]');
  report('member roles change asks', await confirm(page));
  await page.waitForFunction(() => /roles reader\.$/.test(document.querySelector('#member-result').textContent.trim()));
  report('member roles changed says', await page.textContent('#member-result'));
  await settle(page);
  report('member row after the change', await page.evaluate(() => [...document.querySelectorAll('main tbody tr')].map(tr => tr.cells[1].textContent).filter((t, i, all) => document.querySelectorAll('main tbody tr')[i].cells[0].textContent === 'tb-user')));
  await page.click('button[aria-label="Remove member tb-user"]');
  report('member remove asks', await confirm(page));
  await page.waitForFunction(() => /removed/.test(document.querySelector('#member-result').textContent));
  report('member remove says', await page.textContent('#member-result'));
  // a member holding a role beyond reader, operator and admin (release, limited to prod-eu)
  await page.click('button[aria-label="Edit roles of tb-release"]');
  report('member with release prefills', await page.evaluate(() => ({ release: document.getElementById('role-release') ? document.getElementById('role-release').checked : null,
    reader: document.getElementById('role-reader').checked })));
  await page.check('#role-operator');
  await page.click('#add-member button[type=submit]');
  await page.waitForFunction(() => /tb-release is a member/.test(document.querySelector('#member-result').textContent) || document.querySelector('dialog[open]'));
  report('member with release, operator added', await page.evaluate(() => document.querySelector('dialog[open]') ? `asked: ${document.querySelector('dialog[open]').textContent}` : document.querySelector('#member-result').textContent));
  // reader taken away: the membership is removed and added again, its release limit kept
  await settle(page);
  await page.click('button[aria-label="Edit roles of tb-release"]');
  await page.uncheck('#role-reader');
  await page.click('#add-member button[type=submit]');
  report('member with release, reader taken away asks', await confirm(page));
  await page.waitForFunction(() => /tb-release is a member/.test(document.querySelector('#member-result').textContent));
  await page.fill('#clientname', 'tb-client');
  await page.click('#add-client button[type=submit]');
  await page.waitForSelector('#member-result .secret textarea');
  report('client key', await page.inputValue('#member-result .secret textarea'));
  await settle(page);
  await page.click('button[aria-label="Delete client tb-client"]');
  report('client delete asks', await confirm(page));
  await page.waitForFunction(() => /deleted/.test(document.querySelector('#member-result').textContent));
  report('client delete says', await page.textContent('#member-result'));

  // ---- a token with an expiry ----
  await visit(page, `/o/${o}/tokens`);
  await page.fill('#description', 'a week');
  await page.selectOption('#lifetime', String(7 * 86400));
  await page.click('form.create button[type=submit]');
  await page.waitForSelector('.secret input');
  report('token made', { label: await page.textContent('.secret label'), says: await page.textContent('main .done') });
  const tokenId = (await page.textContent('.secret label')).match(/Token ([0-9a-f]+)/)[1];
  await page.waitForSelector(`button[aria-label="Disable token ${tokenId}"]`);
  await page.click(`button[aria-label="Disable token ${tokenId}"]`);
  await page.waitForSelector(`button[aria-label="Enable token ${tokenId}"]`);
  report('token disabled says', await page.textContent('main .done'));

  // ---- a client's key deleted ----
  await visit(page, `/o/${o}/clients/tb-keyed`);
  await page.click('button[aria-label="Delete key default"]');
  report('key delete asks', await confirm(page));
  await page.waitForSelector('#principal-result .done');
  report('key delete says', await page.textContent('#principal-result'));

  // ---- the events page: one request for the newest, links to the objects ----
  const asked = [];
  page.on('request', r => { if (r.url().includes('/events?')) asked.push(r.url().replace(/^.*\/events\?/, '')); });
  await visit(page, `/o/${o}/events`);
  await page.waitForSelector('main tbody tr');
  report('events asked', asked.slice());
  report('events links', await page.evaluate(() => [...document.querySelectorAll('main tbody tr')].slice(0, 40)
    .map(tr => [tr.cells[2].textContent, tr.cells[4].textContent, (tr.cells[3].querySelector('a') || {}).hash || '', tr.cells[3].textContent])));
  // ---- a group comparison, promote of one policy of two ----
  await visit(page, `/o/${o}/groups/prod?from=dev`);
  report('group compare', await page.evaluate(() => {
    const promote = document.querySelector('form.promote'), table = document.querySelector('main .side-by-side');
    return { summary: [...document.querySelectorAll('details.diff li')].map(li => li.textContent).join('\n'),
      open: [...document.querySelectorAll('details.diff')].some(d => d.open),
      promoteFirst: !!(promote && table && (promote.compareDocumentPosition(table) & Node.DOCUMENT_POSITION_FOLLOWING)),
      choices: [...document.querySelectorAll('form.promote input[type=checkbox]')].map(b => b.value) };
  }));
  await page.click('main details.diff summary');
  await page.screenshot({ path: `${cfg.out}/group-compare.png`, fullPage: true });
  await page.uncheck('#promote-db');
  await page.click('#promote');
  report('promote asks', await confirm(page));
  await page.waitForSelector('#promote-result .done');
  report('promote says', await page.textContent('#promote-result'));

  // ---- deletions: a revision, a refused one, a pointer, a group ----
  await visit(page, `/o/${o}/policies/web`);
  await page.click('button[aria-label="Delete revision r-old"]');
  report('revision delete asks', await confirm(page));
  await page.waitForSelector('#policy-result .done');
  report('revision delete says', await page.textContent('#policy-result'));
  await page.click('button[aria-label="Delete revision r-dev"]');
  await page.waitForSelector('dialog[open]');
  report('pointed revision delete asks', await page.textContent('dialog[open]'));
  await page.click('dialog[open] button:not(.danger)');
  await page.waitForFunction(() => !document.querySelector('dialog[open]'));
  await visit(page, `/o/${o}/groups/dev?from=prod`);
  await page.click('button[aria-label="Remove db from dev"]');
  report('pointer remove asks', await confirm(page));
  await page.waitForSelector('#promote-result .done');
  report('pointer remove says', await page.textContent('#promote-result'));

  // ---- two revisions of one policy ----
  await visit(page, `/o/${o}/policies/web`);
  await page.selectOption('#rev-a', 'r-prod');
  await page.selectOption('#rev-b', 'r-dev');
  await page.click('#compare-revisions button[type=submit]');
  // (the address changes a moment before the router shows the new page: its heading waited for)
  await page.waitForFunction(() => /compare/.test(location.hash) && /→/.test((document.querySelector('main h1') || {}).textContent || ''));
  await settle(page);
  report('revision compare', await page.evaluate(() => ({
    h1: document.querySelector('main h1').textContent,
    summary: [...document.querySelectorAll('details.diff[open] li')].map(li => li.textContent).join('\n'),
    removed: [...document.querySelectorAll('.diff-view tr.removed td.code')].map(td => td.textContent),
    added: [...document.querySelectorAll('.diff-view tr.added td.code')].map(td => td.textContent) })));
  await page.screenshot({ path: `${cfg.out}/revision-compare.png`, fullPage: true });

  await visit(page, `/o/${o}/groups/qa`);
  await page.click('#delete-group');
  report('group delete asks', await confirm(page));
  await page.waitForSelector('main .done');
  report('group delete says', await page.textContent('main .done'));

  // ---- a document diff, unified then side by side ----
  await visit(page, `/o/${o}/diff/${cfg.rev_a}/${cfg.rev_b}`);
  const unified = await page.evaluate(() => ({
    unified: [...document.querySelectorAll('.diff-view tr.removed, .diff-view tr.added')].map(tr => [tr.querySelector('td.mark').textContent, tr.querySelector('td.code').textContent]),
    heading: (document.querySelector('section.doc-diff h3') || {}).textContent,
    folded: document.querySelectorAll('.diff-view tr.fold').length }));
  await page.screenshot({ path: `${cfg.out}/document-diff.png`, fullPage: true });
  await page.click('.modes button[data-mode=split]');
  report('document diff', { ...unified, hash: await page.evaluate(() => location.hash),
    split: await page.evaluate(() => [...document.querySelectorAll('.diff-view[data-mode=split] tr')].filter(tr => tr.querySelector('td.removed, td.added'))
      .map(tr => [(tr.querySelector('td.removed') || {}).textContent, (tr.querySelector('td.added') || {}).textContent])) });
  // ---- the revisions and a revision's documents: pages asked of the server ----
  const docsAsked = [];
  const onDocs = r => {
    const m = r.url().match(/\/api\/v1\.0\/(revisions(?:\/\d+\/(?:rendered-)?documents)?)\?(.*)$/);
    if (m) docsAsked.push(`${m[1].replace(/\/\d+\//, '/N/')}?${decodeURIComponent(m[2])}`);
  };
  const docTable = p => p.evaluate(() => ({
    caption: (document.querySelector('main caption') || {}).textContent || '',
    names: [...document.querySelectorAll('main tbody tr')].map(tr => (tr.cells[1] || tr.cells[0]).firstChild.textContent),
    ids: [...document.querySelectorAll('main tbody tr')].map(tr => tr.cells[0].textContent),
    pager: (document.querySelector('main nav.pager span') || {}).textContent || '',
  }));
  page.on('request', onDocs);
  await visit(page, `/o/${o}/documents`);
  report('revisions list', await docTable(page));
  await clickAndSettle(page, 'main th:nth-child(1) button.sort');
  report('revisions ascending', await docTable(page));
  await visit(page, `/o/${o}/documents?sort=created`); // an old link's sort key: the default order
  report('revisions by an old sort key', await docTable(page));
  await visit(page, `/o/${o}/documents?sort=id`);
  report('revisions by id from the address', await docTable(page));
  await page.fill('main input[type=search]', 'many');
  await page.waitForFunction(() => document.querySelectorAll('main tbody tr').length === 1);
  await settle(page);
  report('revisions filtered', await docTable(page));
  await visit(page, `/o/${o}/documents/${cfg.rev_c}`);
  report('documents first page', await docTable(page));
  await clickAndSettle(page, 'main nav.pager button[rel=next]');
  report('documents next page', await docTable(page));
  await clickAndSettle(page, 'main nav.pager button[rel=prev]');
  report('documents previous page', await docTable(page));
  await clickAndSettle(page, 'main th:nth-child(2) button.sort');
  await clickAndSettle(page, 'main th:nth-child(2) button.sort');
  report('documents by name, descending', await docTable(page));
  await page.fill('main input[type=search]', 'doc-11');
  await page.waitForFunction(() => document.querySelectorAll('main tbody tr').length === 10);
  await settle(page);
  report('documents filtered', await docTable(page));
  await visit(page, `/o/${o}/documents`); // (a change of the address's query alone is the grid's own)
  await visit(page, `/o/${o}/documents/${cfg.rev_c}?view=rendered`);
  report('rendered first page', await docTable(page));
  await clickAndSettle(page, 'main nav.pager button[rel=next]');
  report('rendered next page', await docTable(page));
  page.off('request', onDocs);
  report('documents asked', docsAsked);

  // ---- a revision tagged, untagged, rolled back to ----
  await visit(page, `/o/${o}/documents/${cfg.rev_a}`);
  await page.waitForFunction(() => !/…/.test(document.getElementById('validations').textContent));
  report('revision validations', await page.evaluate(() => ({ status: document.querySelector('.revision-actions p').textContent,
    validations: document.getElementById('validations').textContent,
    failed: [...document.querySelectorAll('#validations strong.bad')].map(e => e.textContent) })));
  await page.fill('#tag', 'known-good');
  await page.click('#add-tag button[type=submit]');
  await page.waitForSelector('button[aria-label="Delete tag known-good"]');
  report('tag says', await page.textContent('#revision-result'));
  await page.fill('#tag', 'scratch');
  await page.click('#add-tag button[type=submit]');
  await page.waitForSelector('button[aria-label="Delete tag scratch"]');
  await page.click('button[aria-label="Delete tag scratch"]');
  report('untag asks', await confirm(page));
  await page.waitForFunction(() => !document.querySelector('button[aria-label="Delete tag scratch"]'));
  report('untag says', await page.textContent('#revision-result'));
  await page.click('#rollback');
  report('rollback asks', await confirm(page));
  await page.waitForFunction(() => /Rolled back/.test(document.querySelector('#revision-result').textContent));
  report('rollback says', await page.textContent('#revision-result'));
  report('admin problems', problems.splice(0));
  // a revision that is not there: its title, back link and one error, no actions
  await visit(page, `/o/${o}/documents/999999`);
  report('missing revision', await page.evaluate(() => ({ title: document.querySelector('main h1').textContent,
    errors: [...document.querySelectorAll('main .error')].map(e => e.textContent),
    actions: !!document.querySelector('#rollback, #add-tag, .revision-actions') })));
  report('missing revision problems', problems.splice(0));

  // ---- a reader ----
  const rpage = await newPage();
  await signIn(rpage, cfg.reader);
  await visit(rpage, `/o/${o}/documents/${cfg.rev_b}`);
  const reader = await rpage.evaluate(() => {
    const rows = [...document.querySelectorAll('main tbody tr')];
    const secret = rows.find(tr => tr.querySelector('.encrypted'));
    return { encrypted: rows.filter(tr => tr.querySelector('.encrypted')).map(tr => tr.cells[1].firstChild.textContent),
      reveal: document.querySelectorAll('button.reveal').length, cell: secret ? secret.cells[4].textContent : '',
      leak: document.body.textContent.includes('tb-secret-value') };
  });
  const controls = {};
  const titles = {};
  for (const [name, hash] of [['revision', `/o/${o}/documents/${cfg.rev_b}`], ['node', `/o/${o}/nodes/web001`], ['nodes', `/o/${o}/nodes`],
    ['members', `/o/${o}/members`], ['group', `/o/${o}/groups/prod?from=dev`], ['policy', `/o/${o}/policies/web`], ['clusters', `/o/${o}/clusters`]]) {
    await visit(rpage, hash);
    titles[name] = await rpage.title();
    const found = await rpage.evaluate(() => [...document.querySelectorAll('main button.danger, main form.create, main form.promote, #add-tag, #rollback, #edit-cluster')]
      .map(el => el.id || el.getAttribute('aria-label') || el.className));
    if (found.length) controls[name] = found;
  }
  report('reader', { ...reader, controls });
  report('titles', titles);
  report('reader problems', problems.splice(0));
  await rpage.context().close();

  // ---- a phone ----
  const phone = await newPage(390, 844);
  await signIn(phone, cfg.admin);
  await visit(phone, `/o/${o}/nodes`);
  report('phone nodes', await phone.evaluate(() => {
    const td = document.querySelector('main tbody td');
    const narrow = [...document.querySelectorAll('main td, main th')].filter(el => el.offsetParent && el.textContent.trim().length > 2)
      .map(el => el.getBoundingClientRect().width).filter(w => w < 48).length;
    return { tdDisplay: getComputedStyle(td).display, label: getComputedStyle(td, '::before').content,
      navShown: getComputedStyle(document.getElementById('nav')).display !== 'none', narrow,
      overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth };
  }));
  await phone.screenshot({ path: `${cfg.out}/phone-nodes.png` });
  await phone.click('#menu-toggle');
  report('phone menu opened', await phone.evaluate(() => ({
    shown: getComputedStyle(document.getElementById('nav')).display !== 'none',
    expanded: document.getElementById('menu-toggle').getAttribute('aria-expanded') })));
  await phone.click('#nav a[href$="/clusters"]');
  await settle(phone);
  // (hashchange, which folds the menu, is an event of its own after the click: waited for, up
  // to 5 s, or the menu is reported as it then is)
  await phone.waitForFunction(() => getComputedStyle(document.getElementById('nav')).display === 'none', null, { timeout: 5000 }).catch(() => null);
  report('phone menu after a choice', await phone.evaluate(() => ({ hash: location.hash,
    shown: getComputedStyle(document.getElementById('nav')).display !== 'none' })));
  await phone.click('#menu-toggle');
  await phone.keyboard.press('Escape');
  report('phone menu after Escape', await phone.evaluate(() => ({ shown: getComputedStyle(document.getElementById('nav')).display !== 'none',
    expanded: document.getElementById('menu-toggle').getAttribute('aria-expanded'), focus: document.activeElement.id })));
  report('phone problems', problems.splice(0));
} catch (err) {
  report('driver error', String(err && err.stack || err));
} finally {
  await browser.close();
}
