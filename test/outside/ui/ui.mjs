// Drives the MCP Inspector web UI (a full MCP Apps host) with playwright-core
// and the system Chromium: opens each skilljack-mcp app, makes one change
// through it, and checks the server's state (config.json in the isolated
// HOME). Run by test/outside/ui.sh, which sets the environment below.
//
//   UI_TOOLS      folder holding node_modules/playwright-core
//   UI_URL        the inspector's web UI, e.g. http://127.0.0.1:6274/
//   UI_CONFIG     the server's config.json
//   UI_OUT        folder for screenshots
//   CHROMIUM      the browser executable
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";

const { chromium } = createRequire(resolve(process.env.UI_TOOLS, "x.js"))("playwright-core");
const out = process.env.UI_OUT;
let passed = 0;
const ok = (what) => { passed++; console.log("ok   " + what); };
const config = () => JSON.parse(readFileSync(process.env.UI_CONFIG, "utf8"));

// viewFrame returns the frame (inside the inspector's sandbox proxy) whose
// document has the element sel: the app's view.
async function viewFrame(page, sel) {
  const deadline = Date.now() + 20000;
  for (;;) {
    for (const f of page.frames()) {
      try { if (await f.locator(sel).count()) return f; } catch { /* frame detached */ }
    }
    if (Date.now() > deadline) throw new Error("no view frame with " + sel);
    await page.waitForTimeout(200);
  }
}

// until polls fn until it returns true (10 s).
async function until(fn, what) {
  const deadline = Date.now() + 10000;
  for (;;) {
    if (await fn()) return;
    if (Date.now() > deadline) throw new Error("timed out waiting for " + what);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM,
  args: process.getuid && process.getuid() === 0 ? ["--no-sandbox"] : [],
});
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  await page.goto(process.env.UI_URL);
  await page.getByRole("switch").first().check({ force: true }); // connect
  await page.getByText("Connected", { exact: true }).waitFor();
  await page.getByText("Apps", { exact: true }).click();

  // Config app: allow a GitHub org by typing it and pressing Enter.
  await page.getByRole("button", { name: /^Configure Skills/ }).click();
  let view = await viewFrame(page, "#dirs li[data-path]");
  ok("config app rendered in the inspector: " + (await view.locator("#stats").innerText()));
  const origin = await view.evaluate(() => String(self.origin));
  if (origin !== "null") throw new Error("config view origin is " + origin + ", want the opaque null");
  await view.locator("#org-input").fill("acme-inspector");
  await view.locator("#org-input").press("Enter");
  await view.locator("#orgs li", { hasText: "acme-inspector" }).waitFor();
  await until(() => (config().githubAllowedOrgs || []).includes("acme-inspector"), "config.json githubAllowedOrgs");
  ok("config app: org added through the view; config.json githubAllowedOrgs = " + JSON.stringify(config().githubAllowedOrgs));
  await page.screenshot({ path: join(out, "inspector-skill-config.png") });

  // Display app: turn Assistant off for skills-a__alpha.
  await page.getByRole("button", { name: /^View Skills/ }).click();
  view = await viewFrame(page, "#skills li[data-skill]");
  ok("display app rendered in the inspector: " + (await view.locator("#stats").innerText()));
  const card = view.locator('#skills li[data-skill="skills-a__alpha"]');
  await card.locator('input[id^="t:assistant:"]').click();
  await card.getByText("Customized").waitFor();
  await until(() => {
    const o = (config().skillInvocationOverrides || {})["skills-a__alpha"];
    return o && o.assistant === false;
  }, "config.json skillInvocationOverrides");
  ok("display app: Assistant off saved; config.json skillInvocationOverrides = " + JSON.stringify(config().skillInvocationOverrides));
  await page.screenshot({ path: join(out, "inspector-skill-display.png") });

  // The inspector's colour-scheme switch reaches the view as host context
  // (ui/notifications/host-context-changed) and restyles it.
  const look = () => view.evaluate(() => [document.documentElement.dataset.theme || "", getComputedStyle(document.body).backgroundColor]);
  const [theme0, bg0] = await look();
  await page.getByRole("button", { name: "Toggle color scheme" }).click();
  await until(async () => (await look())[0] !== theme0, "the view's theme to change");
  const [theme1, bg1] = await look();
  if (bg1 === bg0) throw new Error(`theme ${theme0} -> ${theme1} left the view's background at ${bg0}`);
  ok(`theme switch in the inspector restyles the view: ${theme0} ${bg0} -> ${theme1} ${bg1}`);
  await page.screenshot({ path: join(out, "inspector-skill-display-" + theme1 + ".png") });
} finally {
  await browser.close();
}
console.log(`ui: ${passed} passed, 0 failed`);
