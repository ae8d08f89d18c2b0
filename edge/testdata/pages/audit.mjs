// Audits pages in Debian's Chromium, as a person's browser opens them:
//
//   node audit.mjs <chromium> <out-dir>   reads a JSON list of {name, url} on stdin
//
// For each page, at 390 px wide (a phone, light scheme) and at 1280 px
// (a desktop, dark scheme, which also checks the dark colours' contrast):
// the bytes the browser took over the network to show it (every
// resource, as it was sent: compressed), whether anything is wider than
// the window (horizontal overflow, with the elements that stick out), the
// violations axe-core finds of any impact, and a whole-page screenshot
// written to <out-dir>/<name>-<width>.png. Prints one JSON object a page
// and width on stdout; the Go test (edge/pages_audit_test.go) judges them.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import puppeteer from "puppeteer-core";

const require = createRequire(import.meta.url);
const axeSource = readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");
const [chromium, outDir] = process.argv.slice(2);
const pages = JSON.parse(readFileSync(0, "utf8"));

const widths = [
  { width: 390, height: 844, scheme: "light", mobile: true },
  { width: 1280, height: 800, scheme: "dark", mobile: false },
];

const browser = await puppeteer.launch({
  executablePath: chromium,
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--hide-scrollbars"],
});
try {
  for (const p of pages) {
    for (const w of widths) {
      const page = await browser.newPage();
      const cdp = await page.createCDPSession();
      await cdp.send("Network.enable");
      await cdp.send("Network.setCacheDisabled", { cacheDisabled: true });
      let bytes = 0, requests = 0;
      const failed = [];
      cdp.on("Network.loadingFinished", (e) => { bytes += e.encodedDataLength; requests++; });
      cdp.on("Network.loadingFailed", (e) => failed.push(e.errorText));
      const statuses = [];
      page.on("response", (r) => statuses.push({ url: r.url(), status: r.status() }));
      const consoleErrors = [];
      page.on("console", (m) => { if (m.type() === "error") consoleErrors.push(m.text()); });
      await page.setViewport({ width: w.width, height: w.height, isMobile: w.mobile, hasTouch: w.mobile, deviceScaleFactor: 1 });
      await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: w.scheme }]);
      const res = await page.goto(p.url, { waitUntil: "load", timeout: 30000 });
      const layout = await page.evaluate(() => {
        const root = document.documentElement, limit = root.clientWidth;
        const wide = [];
        for (const el of document.body.querySelectorAll("*")) {
          const r = el.getBoundingClientRect();
          if (r.right > limit + 0.5 && wide.length < 5) {
            wide.push(`${el.tagName.toLowerCase()}${el.id ? "#" + el.id : ""}${el.className && typeof el.className === "string" ? "." + el.className.split(" ").join(".") : ""} (${Math.round(r.right)} px)`);
          }
        }
        return { scrollWidth: root.scrollWidth, clientWidth: limit, wide, title: document.title,
          description: document.querySelector('meta[name="description"]')?.content ?? "" };
      });
      await page.evaluate(axeSource);
      const axe = await page.evaluate(async () => {
        const r = await window.axe.run(document, { resultTypes: ["violations"] });
        return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help,
          nodes: v.nodes.slice(0, 3).map((n) => n.target.join(" ")) }));
      });
      const shot = `${outDir}/${p.name}-${w.width}.png`;
      await page.screenshot({ path: shot, fullPage: true });
      process.stdout.write(JSON.stringify({ name: p.name, url: p.url, width: w.width, scheme: w.scheme,
        status: res ? res.status() : 0, bytes, requests, failed, consoleErrors,
        subresources: statuses.filter((s) => s.url !== p.url),
        ...layout, violations: axe, screenshot: shot }) + "\n");
      await page.close();
    }
  }
} finally {
  await browser.close();
}
