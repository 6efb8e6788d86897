// switcher.mjs: drives Debian's chromium over the admin pages' organization switcher for
// t/7009-admin-switcher.t (issue 50 item 5): what the pages ask of GET /organizations from the
// sign-in on, the switcher's options, and where its last one leads. It reports what it saw,
// one JSON line each ({"name", "value"}), and decides nothing.
// Usage: node switcher.mjs CONFIG.json (url, org, admin, out)
import { driver } from './browser.mjs';

const { cfg, report, browser, newPage, problems, o, signIn, visit } = await driver();

try {
  const page = await newPage();
  const asked = [];
  page.on('request', r => {
    const u = new URL(r.url());
    if (u.pathname === '/organizations') asked.push(u.search);
  });
  await signIn(page, cfg.admin);
  await visit(page, `/o/${o}/policies`);
  await page.waitForSelector('#org-switch:not([hidden])');
  report('asked', asked);
  report('options', await page.evaluate(() =>
    [...document.querySelectorAll('#org-switch option')].map(opt => [opt.value, opt.textContent, opt.selected])));
  await page.screenshot({ path: `${cfg.out}/switcher.png` });
  await page.selectOption('#org-switch', '');
  await page.waitForFunction(() => location.hash === '#/orgs', null, { timeout: 10000 });
  report('after all', await page.evaluate(() => location.hash));
  report('problems', problems);
} catch (err) {
  report('error', String(err && err.stack || err));
} finally {
  await browser.close();
}
