// Runs SQL steps on the ClickHouse engine embedded in npm's chdb and
// prints one JSON result per step (see ../chdb.go).
//
//   node run.js steps.json results.json
//
// steps.json:   {"session": "<dir>", "steps": [{"sql": "...", "format": "TSV..."}, ...]}
// results.json: {"version": "...", "results": [{"ok": true, "out": "..."} | {"ok": false, "error": "..."}]}
//
// The results go to a file, not stdout: the engine may print there.
"use strict";
const fs = require("fs");
const { Session } = require("chdb");

const input = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const session = new Session(input.session);
const results = [];
for (const step of input.steps) {
  try {
    const out = session.query(step.sql, step.format || "TabSeparated");
    results.push({ ok: true, out: step.format ? out : "" });
  } catch (e) {
    results.push({ ok: false, error: String(e && e.message ? e.message : e) });
  }
}
const version = session.query("SELECT version()", "TabSeparated").trim();
session.cleanup();
fs.writeFileSync(process.argv[3], JSON.stringify({ version, results }));
