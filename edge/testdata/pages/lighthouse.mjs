// Runs Lighthouse 12.2.3 with its mobile profile (a mid-range phone on a
// throttled 4G connection, simulated) on pages in Debian's Chromium:
//
//   node lighthouse.mjs <chromium> < pages.json   (a JSON list of {name, url})
//
// Prints one JSON object a page: the four category scores (performance,
// accessibility, best practices, SEO: 0 to 100), largest contentful
// paint and total blocking time in ms, cumulative layout shift, the
// page's total weight as sent, and every audit of a category that did not
// pass. bench/pages.sh runs it; bench/README.md, *Pages for people*,
// holds the figures.
import { readFileSync } from "node:fs";
import * as chromeLauncher from "chrome-launcher";
import lighthouse from "lighthouse";

const [chromium] = process.argv.slice(2);
const pages = JSON.parse(readFileSync(0, "utf8"));
const chrome = await chromeLauncher.launch({
  chromePath: chromium,
  chromeFlags: ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
try {
  for (const p of pages) {
    const r = await lighthouse(p.url, {
      port: chrome.port, output: "json", logLevel: "error",
      onlyCategories: ["performance", "accessibility", "best-practices", "seo"],
    });
    const lhr = r.lhr;
    const scores = {};
    const misses = [];
    for (const [id, c] of Object.entries(lhr.categories)) {
      scores[id] = Math.round(c.score * 100);
      for (const ref of c.auditRefs) {
        const a = lhr.audits[ref.id];
        if (ref.weight > 0 && a.score !== null && a.score < 1) {
          misses.push({ category: id, audit: ref.id, score: a.score, title: a.title, value: a.displayValue ?? "" });
        }
      }
    }
    process.stdout.write(JSON.stringify({
      name: p.name, url: p.url, scores,
      lcpMs: Math.round(lhr.audits["largest-contentful-paint"].numericValue),
      fcpMs: Math.round(lhr.audits["first-contentful-paint"].numericValue),
      tbtMs: Math.round(lhr.audits["total-blocking-time"].numericValue),
      cls: lhr.audits["cumulative-layout-shift"].numericValue,
      bytes: lhr.audits["total-byte-weight"].numericValue,
      runtimeError: lhr.runtimeError?.message ?? "",
      misses,
    }) + "\n");
  }
} finally {
  await chrome.kill();
}
