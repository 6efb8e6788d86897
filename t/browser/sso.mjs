// sso.mjs: the admin pages' sign-in through an identity provider, in Debian's chromium: the
// "Sign in with NAME" buttons, the provider's login form, back to the pages signed in, and
// sign-out. Reports what it saw, one JSON line each; t/4013 decides.
// Usage: node sso.mjs CONFIG.json   (url, out, provider: the button's display name, user,
// password; wrong_password: a second user's password to try and fail with)
import { driver } from './browser.mjs';

const { cfg, report, browser, newPage, problems, settle } = await driver({ busy: false });

try {
  const page = await newPage();
  const seen = [];
  page.on('request', r => seen.push(r.url()));
  await page.goto(`${cfg.url}/admin/#/signin`);
  await page.waitForSelector('#sso a.button');
  report('buttons', await page.$$eval('#sso a.button', as => as.map(a => a.textContent)));
  await page.screenshot({ path: `${cfg.out}/sso-signin.png`, fullPage: true });
  await page.click(`#sso a.button:has-text("Sign in with ${cfg.provider}")`);
  await page.waitForSelector('input[name=login]');
  report('at the provider', new URL(page.url()).origin !== new URL(cfg.url).origin);
  await page.fill('input[name=login]', cfg.user);
  await page.fill('input[name=password]', cfg.password);
  problems.splice(0); // the provider's own pages (its favicon) are not purser's to judge
  await page.click('button[type=submit]');
  await page.waitForFunction(() => location.hash.startsWith('#/orgs'), null, { timeout: 30000 });
  await settle(page);
  report('address', page.url());
  await page.goto(`${cfg.url}/admin/#/o/${encodeURIComponent(cfg.org)}/members`);
  await settle(page);
  await page.waitForFunction(() => document.getElementById('principal').textContent !== '', null, { timeout: 15000 }).catch(() => {});
  report('principal', await page.evaluate(() => document.getElementById('principal').textContent));
  const stored = await page.evaluate(() => ({
    session: Object.keys(sessionStorage), local: Object.keys(localStorage),
    token: sessionStorage.getItem('purser.token'), cookies: document.cookie,
  }));
  report('storage', stored);
  report('code in history', await page.evaluate(() => history.length));
  await page.screenshot({ path: `${cfg.out}/sso-signed-in.png`, fullPage: true });
  // the requests the page made to purser with a token in the URL (none may)
  report('token in a URL', seen.filter(u => stored.token && u.includes(stored.token)));
  await page.click('#sign-out');
  await page.waitForFunction(() => location.hash === '#/signin');
  await page.waitForSelector('#token');
  report('signed out', await page.evaluate(() => sessionStorage.getItem('purser.token')));
  // login CSRF: a link to the pages with the code of someone else's finished sign-in (cfg.forged)
  // is not a sign-in this tab began: the page says so and trades nothing
  if (cfg.forged) {
    const traded = [];
    page.on('request', r => { if (r.url().endsWith('/auth/sso/session')) traded.push(r.method()); });
    await page.goto(`${cfg.url}/admin/#/sso?code=${encodeURIComponent(cfg.forged)}`);
    await page.waitForSelector('form div.error');
    await settle(page);
    report('forged link', {
      message: await page.$eval('form div.error', e => e.textContent),
      token: await page.evaluate(() => sessionStorage.getItem('purser.token')),
      traded, address: page.url(),
    });
  }
  report('problems', problems.splice(0));
} catch (e) {
  report('error', String(e && e.message || e));
} finally {
  await browser.close();
}
