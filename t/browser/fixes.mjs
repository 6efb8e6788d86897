// fixes.mjs: drives Debian's chromium over the admin pages for t/7004-admin-fixes.t (issue 38):
// the group comparison's text, the events page while its feed is slow, pages whose API call
// fails, every time shown, encrypted documents behind a click, and revoking the token the tab
// is signed in with. It reports what it saw, one JSON line each ({"name", "value"}), and
// decides nothing: the Perl test holds the expectations.
// Usage: node fixes.mjs CONFIG.json (url, org, admin, own: {token, id}, out, group_to,
// group_from, rev_secret, secret_name, time_pages: [[name, hash], ...], error_pages: [...])
import { driver } from './browser.mjs';

const { cfg, report, browser, newPage, problems, o, settle, signIn, visit } = await driver({ busy: false });

// main's text outside <pre> (a value shown as data stays as the API gave it)
const mainText = page => page.evaluate(() => {
  const copy = document.querySelector('main').cloneNode(true);
  for (const p of copy.querySelectorAll('pre')) p.remove();
  return copy.textContent;
});

try {
  const page = await newPage();
  const asked = [];
  page.on('request', r => asked.push(r.url()));
  await signIn(page, cfg.admin);

  // bug 1: the group comparison
  await visit(page, `/o/${o}/groups/${cfg.group_to}?from=${cfg.group_from}`);
  await page.waitForSelector('main table');
  report('group text', await page.evaluate(() => document.querySelector('main').textContent));
  await page.screenshot({ path: `${cfg.out}/group.png`, fullPage: true });

  // bug 5: the events page while the feed is slow to answer
  await page.route('**/events?*', async route => {
    await new Promise(r => setTimeout(r, 1500));
    await route.continue().catch(() => null); // (a request the page gave up on)
  });
  await page.goto(`${cfg.url}/admin/#/o/${o}/events`);
  await page.waitForFunction(() => (document.querySelector('main h1') || {}).textContent === 'Recent changes', null, { timeout: 10000 });
  report('events while loading', await page.evaluate(() => ({
    loading: !!document.querySelector('main .loading[role=status]'),
    rows: document.querySelectorAll('main tbody tr').length })));
  await page.unroute('**/events?*');
  await settle(page);
  await page.waitForSelector('main tbody tr');
  report('events after loading', await page.evaluate(() => ({
    loading: !!document.querySelector('main .loading'), rows: document.querySelectorAll('main tbody tr').length })));

  // the events page's filters: kinds (the API's) and actor
  const filtered = {};
  for (const [name, query] of [['kinds', 'kinds=cluster'], ['actor', `actor=${cfg.actor}`]]) {
    await visit(page, `/o/${o}/events?${query}`);
    await page.waitForSelector('main tbody tr');
    filtered[name] = await page.evaluate(() => [...document.querySelectorAll('main tbody tr')]
      .map(tr => tr.cells.length > 5 ? [tr.cells[2].textContent, tr.cells[5].textContent] : []));
  }
  report('events filtered', filtered);

  // each event's object linked only where it is there and the signed-in principal's to open
  await visit(page, `/o/${o}/events`);
  await page.waitForSelector('main tbody tr');
  report('events links', await page.evaluate(() => [...document.querySelectorAll('main tbody tr')]
    .filter(tr => tr.cells.length > 5).map(tr => {
      const a = tr.cells[3].querySelector('a');
      return [tr.cells[2].textContent, tr.cells[4].textContent, tr.cells[3].textContent, a ? a.getAttribute('href') : null];
    })));

  // bug 6: a page whose API call fails keeps its title, back link and filters
  const errors = {};
  for (const [name, hash] of cfg.error_pages) {
    await visit(page, hash);
    errors[name] = await page.evaluate(() => ({
      h1: (document.querySelector('main h1') || {}).textContent || '',
      back: [...document.querySelectorAll('main a')].map(a => a.getAttribute('href')),
      inputs: Object.fromEntries([...document.querySelectorAll('main input, main select')].map(i => [i.name || i.id, i.value])),
      error: (document.querySelector('main .error') || {}).textContent || '' }));
  }
  report('error pages', errors);
  problems.splice(0); // (the browser logs the refused requests itself)

  // readable times: no raw ISO time outside data, a <time> with the exact times on hover
  const times = {};
  for (const [name, hash] of cfg.time_pages) {
    await visit(page, hash);
    await page.waitForSelector('main tbody tr');
    const text = await mainText(page);
    times[name] = {
      raw: (text.match(/\d{4}-\d\d-\d\dT\d\d:\d\d/g) || []),
      times: await page.evaluate(() => [...document.querySelectorAll('main time[datetime]')]
        .map(t => ({ datetime: t.getAttribute('datetime'), title: t.getAttribute('title') || '', text: t.textContent }))),
    };
  }
  report('times', times);

  // secrets behind a click
  asked.length = 0;
  await visit(page, `/o/${o}/documents/${cfg.rev_secret}`);
  await page.waitForSelector('main tbody tr');
  const before = await page.evaluate(() => document.querySelector('main').textContent);
  const row = await page.evaluate(n => {
    const tr = [...document.querySelectorAll('main tbody tr')].find(r => r.textContent.includes(n));
    return tr ? { marker: !!tr.querySelector('.encrypted'), reveal: !!tr.querySelector('button.reveal') } : null;
  }, cfg.secret_name);
  report('secret before reveal', { shown: before.includes(cfg.secret_value), row,
    asked: asked.filter(u => u.includes('/documents')) });
  asked.length = 0;
  if (row && row.reveal) {
    await page.click('main tbody tr:has(button.reveal) button.reveal');
    await page.waitForFunction(v => document.querySelector('main').textContent.includes(v), cfg.secret_value, { timeout: 10000 })
      .catch(() => null);
    report('secret after reveal', { shown: (await page.evaluate(() => document.querySelector('main').textContent)).includes(cfg.secret_value),
      asked: asked.filter(u => u.includes('/documents')) });
  }
  report('admin problems', problems.splice(0));

  // bug 4: revoking the token this tab signed in with
  const own = await newPage();
  await signIn(own, cfg.own.token);
  await visit(own, `/o/${o}/tokens`);
  await own.waitForSelector(`button[aria-label="Revoke token ${cfg.own.id}"]`);
  await own.click(`button[aria-label="Revoke token ${cfg.own.id}"]`);
  await own.waitForSelector('dialog[open]');
  report('own revoke asks', await own.textContent('dialog[open]'));
  await own.click('dialog[open] button.danger');
  await own.waitForSelector('#token', { timeout: 10000 }).catch(() => null);
  await own.waitForTimeout(300);
  report('after own revoke', await own.evaluate(() => ({
    signin: !!document.querySelector('form.signin #token'), hash: location.hash,
    text: document.querySelector('main').textContent, token: sessionStorage.getItem('purser.token') })));
  await own.screenshot({ path: `${cfg.out}/own-revoked.png`, fullPage: true });
  problems.splice(0); // (the browser logs the refused request itself)
  report('done', true);
} catch (err) {
  report('driver error', String(err && err.stack || err));
} finally {
  await browser.close();
}
