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
        // A table wider than its box must scroll in a region a reader can
        // reach (focusable, named) and see scrolls (the edges' shadows).
        const clipped = [];
        for (const t of document.querySelectorAll("table")) {
          const box = t.parentElement, w = t.getBoundingClientRect().width;
          if (w <= box.clientWidth + 0.5) continue;
          const s = getComputedStyle(box);
          const ok = box.getAttribute("role") === "region" && box.tabIndex === 0 && box.getAttribute("aria-label") &&
            /auto|scroll/.test(s.overflowX) && (s.backgroundImage.match(/gradient/g) || []).length >= 4;
          if (!ok) clipped.push(`${t.querySelector("caption")?.textContent ?? t.rows[0]?.textContent} (${Math.round(w)} px in ${box.clientWidth})`);
        }
        // A label stays beside its field (on its line, before it) or right above it.
        const split = [];
        for (const l of document.querySelectorAll("label[for]")) {
          const c = document.getElementById(l.htmlFor);
          if (!c) continue;
          const a = l.getBoundingClientRect(), b = c.getBoundingClientRect();
          const beside = a.top < b.bottom && b.top < a.bottom && a.right <= b.left + 1;
          const above = a.bottom <= b.top + 1 && b.top - a.bottom < 8 && Math.abs(a.left - b.left) < 2;
          if (!beside && !above) split.push(`${l.textContent} (${Math.round(a.left)},${Math.round(a.top)}) and #${c.id} (${Math.round(b.left)},${Math.round(b.top)})`);
        }
        return { scrollWidth: root.scrollWidth, clientWidth: limit, wide, clipped, split, title: document.title,
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
