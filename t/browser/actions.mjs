// actions.mjs: drives Debian's chromium over the admin pages' remaining actions for
// t/7008-admin-actions.t (issue 38): a client disabled and enabled, keys added to a client (made
// by the server, shown once) and to a user (a public key given), users and organizations
// created and deleted by a server admin, old policy revisions collected after a dry run, an
// organization exported (a download) and imported into an empty one, a 403 shown with the
// API's message, and what a reader is not offered. It reports what it saw, one JSON line each
// ({"name", "value"}), and decides nothing: the Perl test holds the expectations.
// Usage: node actions.mjs CONFIG.json (url, org, admin, reader, demoted, public_key, out)
import { driver } from './browser.mjs';

const { cfg, report, browser, newPage, problems, o, settle, signIn, visit } = await driver();
// answers a confirmation dialog (and waits for that one to go: another may follow it)
const confirm = async page => {
  const d = await page.waitForSelector('dialog[open]');
  const t = await d.textContent();
  await (await d.$('button.danger')).click();
  await d.waitForElementState('hidden');
  return t;
};
const text = (page, sel) => page.textContent(sel);
const offered = page => page.evaluate(() => ['#toggle-active', '#add-key', '#collect', '#export', '#import', '#delete-org', '#add-org', '#add-user', 'a[href="#/users"]']
  .filter(s => document.querySelector(s)));

try {
  const page = await newPage();
  await signIn(page, cfg.admin);
  report('orgs offers', await offered(page));
  await visit(page, '/orgs');
  await page.waitForLoadState('networkidle');
  report('orgs settings links', await page.$$eval('main a[href$="/organization"]', as => as.length));

  // ---- a client: disabled, enabled, a key made by the server ----
  await visit(page, `/o/${o}/clients/ta-client`);
  report('client offers', await offered(page));
  await page.click('#toggle-active');
  report('client disable asks', await confirm(page));
  await page.waitForSelector('#principal-result .done');
  report('client disable says', await text(page, '#principal-result'));
  report('client after disable', await text(page, 'main p'));
  await page.click('#toggle-active');
  await page.waitForFunction(() => /ta-client enabled\./.test((document.querySelector('#principal-result .done') || {}).textContent || ''));
  report('client enable says', await text(page, '#principal-result'));
  await page.fill('#keyname', 'made-here');
  await page.click('#add-key button[type=submit]');
  await page.waitForSelector('#principal-result .secret, #principal-result .error');
  report('client key result', await text(page, '#principal-result'));
  report('client key says', await text(page, '#principal-result .done'));
  report('client key', await page.inputValue('#principal-result .secret textarea'));
  report('client keys listed', await page.evaluate(() => [...document.querySelectorAll('main table')].pop().textContent));

  // ---- a user: a key from a public key given ----
  await visit(page, `/o/${o}/users/ta-user`);
  report('user page offers', await offered(page));
  await page.fill('#keyname', 'given');
  await page.fill('#expiration', '2031-01-02');
  await page.fill('#publickey', cfg.public_key);
  await page.click('#add-key button[type=submit]');
  await page.waitForSelector('#principal-result .done');
  report('user key says', await text(page, '#principal-result'));
  report('user key shows a secret', !!await page.$('#principal-result .secret'));

  await visit(page, `/o/${o}/users/admin`);
  report('own user page offers', await offered(page));

  // ---- users of the server: created, deleted ----
  await visit(page, '/orgs');
  await page.click('a[href="#/users"]');
  await settle(page);
  await page.fill('#newuser', 'ta-made');
  await page.fill('#displayname', 'Made Here');
  await page.click('#add-user button[type=submit]');
  await page.waitForSelector('#users-result .secret');
  report('user create says', await text(page, '#users-result .done'));
  report('user create key', await page.inputValue('#users-result .secret textarea'));
  await page.screenshot({ path: `${cfg.out}/users.png`, fullPage: true });
  report('own user row', await page.evaluate(() => [...document.querySelectorAll('main tbody tr')].filter(tr => tr.cells[0].textContent === 'admin').map(tr => tr.cells[4].textContent)));
  await page.fill('main input[type=search]', 'ta-gone');
  await page.waitForFunction(() => [...document.querySelectorAll('main tbody tr')].length === 1 && /ta-gone/.test(document.querySelector('main tbody').textContent));
  await page.click('button[aria-label="Delete user ta-gone"]');
  report('user delete asks', await confirm(page));
  await page.waitForFunction(() => /deleted/.test((document.querySelector('#users-result .done') || {}).textContent || ''));
  report('user delete says', await text(page, '#users-result'));

  // ---- an organization created (its validator's key shown once) ----
  await visit(page, '/orgs');
  await page.fill('#orgname', 'ta-new');
  await page.fill('#fullname', 'Made in the browser');
  await page.click('#add-org button[type=submit]');
  await page.waitForSelector('#org-result .secret');
  report('org create says', await text(page, '#org-result .done'));
  report('org create key', await page.inputValue('#org-result .secret textarea'));
  report('org listed', await page.evaluate(() => [...document.querySelectorAll('main tbody tr')].map(tr => tr.cells[0].textContent)));
  report('org full name listed', await page.evaluate(() => [...document.querySelectorAll('main tbody tr')].filter(tr => tr.cells[0].textContent === 'ta-new').map(tr => tr.cells[1].textContent)));
  await page.fill('main input[type=search]', 'ta-new');
  await page.waitForFunction(() => document.querySelectorAll('main tbody tr').length === 1);
  report('org filtered', await page.evaluate(() => [document.querySelector('main tbody tr').cells[0].textContent, document.querySelector('main caption').textContent]));
  await page.click('a[href="#/users"]'); // the same tab, no reload: the switcher reads the organizations again
  await page.waitForFunction(() => /Users of the server/.test((document.querySelector('main h1') || {}).textContent || ''));
  await settle(page);
  report('org switcher', await page.evaluate(() => [...document.querySelectorAll('#org-switch option')].map(x => x.value)));

  // ---- collect_policies: a dry run, then the collection ----
  await visit(page, `/o/${o}/policies`);
  await page.fill('#keep', '1');
  await page.click('#collect button[type=submit]');
  await page.waitForSelector('#collect-now');
  report('collect dry run', await text(page, '#collect-result'));
  await page.screenshot({ path: `${cfg.out}/collect-dry-run.png`, fullPage: true });
  await page.click('#collect-now');
  report('collect asks', await confirm(page));
  await page.waitForFunction(() => /Collected/.test(document.querySelector('#collect-result').textContent));
  report('collect says', await text(page, '#collect-result'));

  // ---- export: a download, without and with secrets ----
  await visit(page, `/o/${o}/organization`);
  report('org page offers', await offered(page));
  await page.screenshot({ path: `${cfg.out}/organization.png`, fullPage: true });
  let wait = page.waitForEvent('download');
  await page.click('#export button[type=submit]');
  let download = await wait;
  await download.saveAs(`${cfg.out}/export.yaml`);
  report('export file', { name: download.suggestedFilename(), path: `${cfg.out}/export.yaml` });
  await page.waitForSelector('#org-page-result .done');
  report('export says', await text(page, '#org-page-result'));
  await page.check('#export-secrets');
  wait = page.waitForEvent('download');
  await page.click('#export button[type=submit]');
  download = await wait;
  await download.saveAs(`${cfg.out}/export-secrets.yaml`);
  report('export with secrets file', `${cfg.out}/export-secrets.yaml`);

  // ---- import: refused by a non-empty organization, then into the new one ----
  await page.setInputFiles('#importfile', `${cfg.out}/export-secrets.yaml`);
  await page.click('#import button[type=submit]');
  await confirm(page);
  await page.waitForSelector('#org-page-result .error');
  report('import refused says', await text(page, '#org-page-result'));
  await visit(page, '/o/ta-new/organization');
  await page.setInputFiles('#importfile', `${cfg.out}/export-secrets.yaml`);
  await page.click('#import button[type=submit]');
  report('import asks', await confirm(page));
  await page.waitForSelector('#org-page-result .done, #org-page-result .error');
  report('import says', await text(page, '#org-page-result'));

  // ---- an organization deleted: refused while it holds things, then with everything ----
  await visit(page, '/o/ta-full/organization');
  await page.click('#delete-org');
  report('org delete asks', await confirm(page));
  report('org delete asks again', await confirm(page));
  await page.waitForSelector('main .done');
  report('org delete says', await text(page, 'main .done'));

  // ---- the members form offers the roles for people, not the machines' ----
  await visit(page, `/o/${o}/members`);
  report('member form roles', await page.evaluate(() => [...document.querySelectorAll('#add-member fieldset.roles input[type=checkbox]')].map(i => i.id.replace(/^role-/, ''))));

  // ---- a 403: the principal lost its role after the page offered the action ----
  const demoted = await newPage();
  await signIn(demoted, cfg.demoted);
  await visit(demoted, `/o/${o}/members`); // not its own role: it could not add itself back
  await demoted.click('button[aria-label="Edit roles of ta-admin2"]');
  await demoted.uncheck('#role-admin');
  await demoted.check('#role-reader');
  await demoted.click('#add-member button[type=submit]');
  await demoted.waitForSelector('#member-result .error');
  report('own role says', await text(demoted, '#member-result'));
  await visit(demoted, `/o/${o}/clients/ta-client`);
  report('demoted offers', await offered(demoted));
  await visit(page, `/o/${o}/members`);
  await page.click('button[aria-label="Edit roles of ta-admin2"]');
  await page.uncheck('#role-admin');
  await page.check('#role-reader');
  await page.click('#add-member button[type=submit]');
  report('demote asks', await confirm(page));
  await page.waitForSelector('#member-result .done');
  report('demote says', await text(page, '#member-result'));
  await demoted.waitForTimeout(1500); // the workers' authentication cache (1 s in tests) forgets its role
  await demoted.click('#toggle-active');
  await confirm(demoted);
  await demoted.waitForSelector('#principal-result .error');
  report('403 says', await text(demoted, '#principal-result .error'));

  // ---- a reader: none of it offered ----
  const reader = await newPage();
  await signIn(reader, cfg.reader);
  report('reader orgs offers', await offered(reader));
  await visit(reader, '/orgs');
  await reader.waitForLoadState('networkidle'); // (each row's permissions asked)
  report('reader orgs settings links', await reader.$$eval('main a[href$="/organization"]', as => as.length));
  for (const [name, hash] of [['client', `/o/${o}/clients/ta-client`], ['policies', `/o/${o}/policies`], ['organization', `/o/${o}/organization`]]) {
    await visit(reader, hash);
    report(`reader ${name} offers`, await offered(reader));
  }
  await visit(reader, '/users');
  report('reader users page', await text(reader, 'main'));
  report('csp', [...await page.evaluate(() => window.__csp), ...await reader.evaluate(() => window.__csp)]);
} catch (err) {
  report('driver error', String(err && err.stack || err));
  for (const [i, p] of browser.contexts().flatMap(c => c.pages()).entries()) await p.screenshot({ path: `${cfg.out}/failed-${i}.png`, fullPage: true }).catch(() => {});
} finally {
  report('problems', problems);
  await browser.close();
}
