// Runs Lighthouse 12.2.3 with its mobile profile (a mid-range phone on a
// throttled 4G connection, simulated) on pages in Debian's Chromium:
//
//   node lighthouse.mjs <chromium> [runs] < pages.json   (a JSON list of {name, url})
//
// Each page is run runs times (default 3) and the median run reported, as
// Lighthouse's own guide to variability advises (computeMedianRun: the
// run whose FCP and interactive times lie nearest the medians).
// A first run of the first page warms the browser and is not reported.
// Prints one JSON object a page: the four category scores (performance,
// accessibility, best practices, SEO: 0 to 100), largest contentful
// paint and total blocking time in ms, cumulative layout shift, the
// page's total weight as sent, and every audit of a category that did not
// pass. bench/pages.sh runs it; bench/README.md, *Pages for people*,
// holds the figures.
import { readFileSync } from "node:fs";
import * as chromeLauncher from "chrome-launcher";
import lighthouse from "lighthouse";
import { computeMedianRun } from "lighthouse/core/lib/median-run.js";

const [chromium, runsArg] = process.argv.slice(2);
const runs = Number(runsArg ?? 3);
const pages = JSON.parse(readFileSync(0, "utf8"));
const chrome = await chromeLauncher.launch({
  chromePath: chromium,
  chromeFlags: ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
try {
  // One run first, not reported: a browser just started spends its first
  // page's main thread on its own warm-up (a long task no page causes).
  if (pages.length > 0) {
    await lighthouse(pages[0].url, { port: chrome.port, output: "json", logLevel: "error", onlyCategories: ["performance"] });
  }
  for (const p of pages) {
    const lhrs = [];
    for (let i = 0; i < runs; i++) {
      const r = await lighthouse(p.url, {
        port: chrome.port, output: "json", logLevel: "error",
        onlyCategories: ["performance", "accessibility", "best-practices", "seo"],
      });
      lhrs.push(r.lhr);
    }
    const lhr = computeMedianRun(lhrs);
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
      name: p.name, url: p.url, runs, scores,
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
