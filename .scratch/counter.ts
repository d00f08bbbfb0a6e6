import { launchBrowser, openPage, startBrowserTestServer } from '../test/browser/harness';
(async () => {
  const server = await startBrowserTestServer();
  const browser = await launchBrowser();
  const { page } = await openPage(browser, server.url);
  await page.click('button.bot-game');
  await page.waitForSelector('.game-screen.leader');
  await page.fill('textarea.instruction-input', 'go to the 🙂 '.repeat(26));
  await page.waitForTimeout(500);
  await page.locator('.leader-panel').screenshot({ path: '.scratch/counter.png' });
  await browser.close();
  await server.close();
})();
