package analytics_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/analytics/chtest"
	"github.com/edge-stats/edge/analytics/chtest/chdb"
	"github.com/edge-stats/edge/analytics/seed"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/changes"
	"github.com/edge-stats/edge/views/replica"
)

// TestSQLOnCurrentClickHouse runs every kind of statement the package
// sends (migrations, seeding, full load and refresh, ranks, week states,
// exports, accounts, keys, usage, every per-request read) against the
// ClickHouse 18.16 server, captures them from its query log as the client
// sent them (values bound), and replays them on a current ClickHouse
// release (npm's chdb) over the same rows: every statement must run there,
// and every read must give the same types and rows.
func TestSQLOnCurrentClickHouse(t *testing.T) {
	eng := needChdb(t)
	srv := chtest.Need(t, srv)
	cfg := srv.NewDatabase(t)
	tag := "compat-" + cfg.Database
	ctx := clickhouse.Context(context.Background(),
		clickhouse.WithSettings(clickhouse.Settings{"log_queries": 1}), clickhouse.WithQuotaKey(tag))

	// Phase one: everything that keeps the data. Every statement the
	// workload sends must be captured: one sent on a context without the
	// test's settings (a background context inside a function) would be
	// missing from the log and go unreplayed, so the server's count of
	// queries over the workload must equal the log's.
	h := &httpCH{addr: srv.HTTPAddr, db: cfg.Database}
	sys := &httpCH{addr: srv.HTTPAddr, db: "system"}
	w := newWorkload(t, ctx, cfg)
	before := queryCount(t, sys)
	w.run()
	sent := queryCount(t, sys) - before - 1 // the count's own query is counted
	if logged := loggedCount(t, srv, tag); logged != sent {
		t.Errorf("the workload sent %d statements and %d were captured: a function sends SQL on a context without the test's quota key and log_queries (every I/O call must take the caller's context)", sent, logged)
	}
	reads := captured(t, srv, tag)
	phase1 := map[string]bool{}
	for _, s := range reads {
		phase1[s.sql] = true
	}

	// The 18.16 server's answers, and its rows, before phase two changes them.
	if err := h.exec(fmt.Sprintf("CREATE TABLE %s (id String) ENGINE = Memory", searchTable)); err != nil {
		t.Fatal(err)
	}
	if err := h.exec(fmt.Sprintf("INSERT INTO %s VALUES %s", searchTable, valuesList(w.searchIDs))); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	steps, checks := replaySteps(t, h, reads, dir, w.searchIDs)
	// Every table's rows while they hold some (the derived tables are
	// filled by the materialized views on each release).
	ts, tc := tableSteps(t, h, true)
	steps, checks = append(steps, ts...), append(checks, tc...)

	// Phase two: what drops data (retention), and the tables' rows after.
	w.runDestructive()
	// Phase two's statements are those phase one did not send (the log
	// orders them by the second only: not by position). Its reads run in
	// place (what they find decides nothing there), and again after every
	// statement of the phase, compared with 18.16's answers now.
	all := captured(t, srv, tag)
	var phase2Reads []stmt
	for _, s := range all {
		if phase1[s.sql] {
			continue
		}
		if s.kind == kindRead {
			phase2Reads = append(phase2Reads, s)
			steps = append(steps, chdb.Step{SQL: s.sql})
			checks = append(checks, check{stmt: s, ranOnly: true})
			continue
		}
		steps = append(steps, chdb.Step{SQL: s.sql})
		checks = append(checks, check{stmt: s})
	}
	if len(phase2Reads) == 0 {
		t.Error("phase two sent no read")
	}
	for _, s := range phase2Reads {
		want, err := h.query(s.sql)
		if err != nil {
			t.Fatalf("18.16 no longer answers a read of phase two: %v\n%s", err, short(s.sql, 800))
		}
		steps = append(steps, chdb.Step{SQL: s.sql, Format: tsvTyped})
		// dropDaysBefore lists partitions, whose text differs between
		// releases (18.16 quotes them; the code trims the quotes); Reset
		// reads a table's engine to make it again, which 18.16 writes
		// with empty parentheses (both releases take either).
		checks = append(checks, check{stmt: s, want: want, unquote: strings.Contains(s.sql, "system.parts"),
			engine: strings.Contains(s.sql, "engine_full")})
	}
	// Every table's rows after both phases (upstream tables emptied by
	// Reset, the others as they were).
	ts, tc = tableSteps(t, h, false)
	steps, checks = append(steps, ts...), append(checks, tc...)
	// Every table is partitioned as its CREATE statement says (a table
	// made AS another inherits the other's partitioning on current
	// releases, not on 18.16).
	q := "SELECT name, partition_key FROM system.tables WHERE database = currentDatabase() AND engine LIKE '%MergeTree' ORDER BY name"
	steps = append(steps, chdb.Step{SQL: q, Format: tsvTyped})
	checks = append(checks, check{stmt: stmt{sql: q, kind: kindRead}, want: partitionKeys(t)})

	results, version, err := eng.Run(context.Background(), steps)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("replayed %d statements (%d distinct captured) on ClickHouse %s", len(steps), len(all), version)
	failed := 0
	for i, c := range checks {
		if msg := c.compare(results[i]); msg != "" {
			failed++
			if failed <= 25 {
				t.Errorf("%s\n--- statement:\n%s", msg, short(c.stmt.sql, 1500))
			}
		}
	}
	if failed > 25 {
		t.Errorf("… and %d more", failed-25)
	}
	w.checkCoverage()
}

// tableSteps returns the steps that read every table of the migrations
// as the edge reads them (FINAL where rows replace or sum: how far parts
// are merged is each engine's business), with the 18.16 server's rows
// now; with full, every table must hold rows, so that the comparison says
// something.
func tableSteps(t *testing.T, h *httpCH, full bool) ([]chdb.Step, []check) {
	t.Helper()
	var steps []chdb.Step
	var checks []check
	for _, table := range migrationTables(t) {
		q := "SELECT * FROM " + table
		if !slices.Contains([]string{"listings", "snapshots", "access_log", "usage_log", "attempts_log", "webhook_deliveries"}, table) {
			q += " FINAL"
		}
		want, err := h.query(q)
		if err != nil {
			t.Fatal(err)
		}
		if _, rows := splitTyped(want); full && len(rows) == 0 {
			t.Errorf("%s holds no row after phase one: its comparison would say nothing (add to the workload what writes it)", table)
		}
		steps = append(steps, chdb.Step{SQL: q, Format: tsvTyped})
		checks = append(checks, check{stmt: stmt{sql: q, kind: kindRead}, want: want})
	}
	return steps, checks
}

// migrationTables returns the tables the migrations make, sorted.
func migrationTables(t *testing.T) []string {
	t.Helper()
	var out []string
	for line := range strings.Lines(partitionKeys(t)) {
		if name, _, ok := strings.Cut(strings.TrimRight(line, "\n"), "\t"); ok && name != "name" && name != "String" {
			out = append(out, name)
		}
	}
	if len(out) < 19 {
		t.Fatalf("only %d tables in the migrations: %v", len(out), out)
	}
	return out
}

// queryCount returns how many queries the server has started.
func queryCount(t *testing.T, h *httpCH) uint64 {
	t.Helper()
	out, err := h.raw("SELECT value FROM system.events WHERE event = 'Query'")
	if err != nil {
		t.Fatal(err)
	}
	var n uint64
	if _, err := fmt.Sscan(string(out), &n); err != nil {
		t.Fatalf("system.events: %q: %v", out, err)
	}
	return n
}

// loggedCount returns how many queries the server logged as started
// under quota key tag.
func loggedCount(t *testing.T, srv *chtest.Server, tag string) uint64 {
	t.Helper()
	h := &httpCH{addr: srv.HTTPAddr, db: "system"}
	if err := h.exec("SYSTEM FLUSH LOGS"); err != nil {
		t.Fatal(err)
	}
	out, err := h.raw(fmt.Sprintf("SELECT count() FROM system.query_log WHERE type = 1 AND quota_key = '%s'", tag))
	if err != nil {
		t.Fatal(err)
	}
	var n uint64
	if _, err := fmt.Sscan(string(out), &n); err != nil {
		t.Fatalf("query_log: %q: %v", out, err)
	}
	return n
}

// partitionKeys returns, as a TabSeparatedWithNamesAndTypes answer, each
// MergeTree table of the migrations with the partition key its CREATE
// statement names ("" for none).
func partitionKeys(t *testing.T) string {
	t.Helper()
	ms, err := analytics.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	create := regexp.MustCompile(`(?is)^CREATE TABLE IF NOT EXISTS (\w+)`)
	partition := regexp.MustCompile(`(?i)PARTITION BY ([^\n]+)`)
	keys := map[string]string{"schema_migrations": ""}
	for _, m := range ms {
		for _, q := range m.Statements {
			c := create.FindStringSubmatch(q)
			if c == nil {
				continue
			}
			keys[c[1]] = ""
			if p := partition.FindStringSubmatch(q); p != nil {
				keys[c[1]] = strings.TrimSpace(p[1])
			}
		}
	}
	out := "name\tpartition_key\nString\tString\n"
	for _, name := range slices.Sorted(maps.Keys(keys)) {
		out += name + "\t" + keys[name] + "\n"
	}
	return out
}

// searchTable is the external table SearchReviews sends with a search
// restricted to listings; the replay makes it a table of the same name.
const searchTable = "search_listings"

const tsvTyped = "TabSeparatedWithNamesAndTypes"

func needChdb(t *testing.T) *chdb.Engine {
	t.Helper()
	eng, err := chdb.Find()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	return eng
}

// The kinds of captured statements.
const (
	kindSchema = iota // CREATE, DROP, a migration's INSERT … SELECT and ADD COLUMN
	kindInsert        // a batch insert: INSERT INTO t (…) FORMAT Native
	kindRead          // SELECT
	kindChange        // ALTER, TRUNCATE
)

type stmt struct {
	sql  string
	kind int
}

// captured returns the statements the server logged as finished under
// quota key tag, in the order it finished them, each text once.
func captured(t *testing.T, srv *chtest.Server, tag string) []stmt {
	t.Helper()
	h := &httpCH{addr: srv.HTTPAddr, db: "system"}
	if err := h.exec("SYSTEM FLUSH LOGS"); err != nil {
		t.Fatal(err)
	}
	// 18.16 logs times in seconds: within a second, the log's own order.
	out, err := h.raw(fmt.Sprintf(`SELECT query FROM system.query_log WHERE type = 2 AND quota_key = '%s'
		ORDER BY event_time FORMAT JSONCompact`, tag))
	if err != nil {
		t.Fatal(err)
	}
	var seen = map[string]bool{}
	var stmts []stmt
	for _, q := range jsonStrings(t, out) {
		if seen[q] {
			continue
		}
		seen[q] = true
		stmts = append(stmts, stmt{sql: q, kind: kindOf(q)})
	}
	if len(stmts) == 0 {
		t.Fatal("no statement was logged: is log_queries honoured?")
	}
	return stmts
}

var firstWord = regexp.MustCompile(`^\s*(\w+)`)

func kindOf(q string) int {
	switch w := strings.ToUpper(firstWord.FindString(q)); strings.TrimSpace(w) {
	case "SELECT", "WITH":
		return kindRead
	case "INSERT":
		if insertValues.MatchString(q) {
			return kindInsert
		}
		return kindSchema // a migration's INSERT … SELECT
	case "ALTER", "TRUNCATE", "OPTIMIZE":
		if addsColumn.MatchString(q) {
			return kindSchema // a migration's ALTER TABLE … ADD COLUMN
		}
		return kindChange
	default:
		return kindSchema
	}
}

var addsColumn = regexp.MustCompile(`(?is)^\s*ALTER\s+TABLE\s+\S+\s+ADD\s+COLUMN\s`)

var insertValues = regexp.MustCompile(`(?is)^\s*INSERT\s+INTO\s+([\w.` + "`" + `]+)\s*\(([^)]*)\)\s*(VALUES|FORMAT\s+Native)\s*$`)

// check is what one replayed step must give.
type check struct {
	stmt    stmt
	want    string // the 18.16 server's answer (TabSeparatedWithNamesAndTypes)
	ranOnly bool   // only whether it ran
	anyTime bool   // the answer depends on the clock: types only
	unquote bool   // single quotes in rows are left out (a partition's name)
	engine  bool   // an engine's text: MergeTree() is MergeTree
}

func (c check) compare(r chdb.Result) string {
	if !r.OK {
		return "fails on the current release: " + short(r.Error, 600)
	}
	if c.ranOnly {
		return ""
	}
	want, got := normalize1816(c.want), r.Out
	if c.unquote {
		want, got = strings.ReplaceAll(want, "'", ""), strings.ReplaceAll(got, "'", "")
	}
	if c.engine {
		want = strings.ReplaceAll(want, "MergeTree() ", "MergeTree ")
	}
	wantTypes, wantRows := splitTyped(want)
	gotTypes, gotRows := splitTyped(got)
	if wantTypes != gotTypes {
		return fmt.Sprintf("result types differ: 18.16 %q, current %q", wantTypes, gotTypes)
	}
	if c.anyTime {
		return ""
	}
	if slices.Equal(wantRows, gotRows) {
		return ""
	}
	ws, gs := slices.Sorted(slices.Values(wantRows)), slices.Sorted(slices.Values(gotRows))
	if slices.Equal(ws, gs) && !ordered(c.stmt.sql) {
		return "" // the same rows; the statement asks for no order
	}
	what := "rows differ"
	if slices.Equal(ws, gs) {
		what = "rows come in another order"
	}
	return fmt.Sprintf("%s: 18.16 gave %d rows, current %d\n18.16:   %s\ncurrent: %s", what, len(wantRows), len(gotRows),
		short(strings.Join(firstDiff(wantRows, gotRows), " | "), 600), short(strings.Join(firstDiff(gotRows, wantRows), " | "), 600))
}

// firstDiff returns the rows of a from the first that b lacks at the same place.
func firstDiff(a, b []string) []string {
	for i := range a {
		if i >= len(b) || a[i] != b[i] {
			return a[i:min(len(a), i+3)]
		}
	}
	return nil
}

// ordered reports whether the statement's outermost SELECT orders its rows.
func ordered(q string) bool {
	i := strings.LastIndex(strings.ToUpper(q), "ORDER BY")
	return i >= 0 && !strings.Contains(q[i:], ")")
}

// splitTyped splits a TabSeparatedWithNamesAndTypes answer into its types
// line and its rows (names are left out: releases name expressions
// differently, and the client reads columns by position).
func splitTyped(s string) (string, []string) {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	if len(lines) < 2 {
		return "", nil
	}
	return lines[1], lines[2:]
}

// normalize1816 writes 18.16's zero dates as current releases do: the
// same value (the epoch) to the client, another text.
func normalize1816(s string) string {
	s = strings.ReplaceAll(s, "0000-00-00 00:00:00", "1970-01-01 00:00:00")
	return strings.ReplaceAll(s, "0000-00-00", "1970-01-01")
}

// replaySteps returns the steps that rebuild the database on the current
// release from the captured statements (the schema, then each table's rows
// through its own batch insert's column list) and replay every read, with
// the 18.16 server's answers.
func replaySteps(t *testing.T, h *httpCH, stmts []stmt, dir string, searchIDs []string) ([]chdb.Step, []check) {
	t.Helper()
	var steps []chdb.Step
	var checks []check
	add := func(s chdb.Step, c check) { steps, checks = append(steps, s), append(checks, c) }
	db := ""
	for _, s := range stmts {
		if s.kind != kindSchema {
			continue
		}
		if m := regexp.MustCompile("(?i)^CREATE DATABASE IF NOT EXISTS (`[^`]+`)").FindStringSubmatch(s.sql); m != nil {
			db = m[1]
		}
	}
	if db == "" {
		t.Fatal("no CREATE DATABASE was captured")
	}
	// The schema first, in the order it was made: CREATE DATABASE, then
	// schema_migrations, then the migrations' statements in order.
	order := map[string]int{}
	ms, err := analytics.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		for _, q := range m.Statements {
			order[q] = len(order) + 2
		}
	}
	var schema []stmt
	for _, s := range stmts {
		if s.kind == kindSchema {
			schema = append(schema, s)
		}
	}
	rank := func(q string) int {
		switch {
		case strings.HasPrefix(q, "CREATE DATABASE"):
			return 0
		case strings.Contains(q, "schema_migrations"):
			return 1
		}
		if r, ok := order[q]; ok {
			return r
		}
		return len(order) + 2
	}
	sort.SliceStable(schema, func(i, j int) bool { return rank(schema[i].sql) < rank(schema[j].sql) })
	for i, s := range schema {
		add(chdb.Step{SQL: s.sql}, check{stmt: s, ranOnly: true})
		if i == 0 {
			add(chdb.Step{SQL: "USE " + db}, check{stmt: stmt{sql: "USE " + db}, ranOnly: true})
		}
	}
	// The rows: each table's rows as the 18.16 server holds them, inserted
	// with the column list its batch insert named (the materialized views
	// fill the derived tables as they did there), every column of the
	// table when the batch named fewer (a column's default, such as
	// access_log's now(), must not differ).
	done := map[string]bool{}
	for _, s := range stmts {
		if s.kind != kindInsert {
			continue
		}
		m := insertValues.FindStringSubmatch(s.sql)
		table, cols := strings.Trim(m[1], "`"), m[2]
		// The batch's own column list, with no rows, must be accepted.
		add(chdb.Step{SQL: fmt.Sprintf("INSERT INTO %s (%s) SELECT %s FROM %s LIMIT 0", table, cols, cols, table)},
			check{stmt: s, ranOnly: true})
		if done[table] {
			continue
		}
		done[table] = true
		file := filepath.Join(dir, table+".tsv")
		body, err := h.raw(fmt.Sprintf("SELECT * FROM %s FORMAT TabSeparated", table))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, body, 0o600); err != nil {
			t.Fatal(err)
		}
		q := fmt.Sprintf("INSERT INTO %s FROM INFILE '%s' FORMAT TabSeparated", table, file)
		add(chdb.Step{SQL: q}, check{stmt: stmt{sql: q}, ranOnly: true})
	}
	q := fmt.Sprintf("CREATE TABLE %s (id String) ENGINE = Memory", searchTable)
	add(chdb.Step{SQL: q}, check{stmt: stmt{sql: q}, ranOnly: true})
	q = fmt.Sprintf("INSERT INTO %s VALUES %s", searchTable, valuesList(searchIDs))
	add(chdb.Step{SQL: q}, check{stmt: stmt{sql: q}, ranOnly: true})
	// Every read, with the 18.16 server's answer now.
	for _, s := range stmts {
		if s.kind != kindRead {
			continue
		}
		want, err := h.query(s.sql)
		if err != nil {
			t.Fatalf("18.16 no longer answers a captured read: %v\n%s", err, short(s.sql, 800))
		}
		add(chdb.Step{SQL: s.sql, Format: tsvTyped}, check{stmt: s, want: want, anyTime: strings.Contains(s.sql, "now()")})
	}
	return steps, checks
}

func valuesList(ids []string) string {
	var b strings.Builder
	for i, id := range ids {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "('%s')", strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(id))
	}
	return b.String()
}

// httpCH sends statements to the 18.16 server's HTTP interface.
type httpCH struct{ addr, db string }

func (h *httpCH) raw(q string) ([]byte, error) {
	u := url.URL{Scheme: "http", Host: h.addr, Path: "/", RawQuery: url.Values{"database": {h.db}}.Encode()}
	resp, err := http.Post(u.String(), "text/plain", strings.NewReader(q))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, errors.New(string(bytes.TrimSpace(body)))
	}
	return body, nil
}

func (h *httpCH) exec(q string) error { _, err := h.raw(q); return err }

func (h *httpCH) query(q string) (string, error) {
	b, err := h.raw(q + "\nFORMAT " + tsvTyped)
	return string(b), err
}

func jsonStrings(t *testing.T, body []byte) []string {
	t.Helper()
	var v struct{ Data [][]string }
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatal(err)
	}
	out := make([]string, 0, len(v.Data))
	for _, row := range v.Data {
		out = append(out, row[0])
	}
	return out
}

func short(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// workload calls every function of the package that sends SQL, over a
// small seeded dataset, and notes which it called.
type workload struct {
	t         *testing.T
	ctx       context.Context
	cfg       analytics.Config
	conn      driver.Conn
	called    map[string]bool
	searchIDs []string
	end       time.Time
}

func newWorkload(t *testing.T, ctx context.Context, cfg analytics.Config) *workload {
	return &workload{t: t, ctx: ctx, cfg: cfg, called: map[string]bool{},
		end: time.Date(2026, 7, 15, 9, 0, 0, 0, time.UTC)}
}

func (w *workload) note(names ...string) {
	for _, n := range names {
		w.called[n] = true
	}
}

func (w *workload) must(err error) {
	w.t.Helper()
	if err != nil {
		w.t.Fatal(err)
	}
}

func (w *workload) run() {
	t, ctx := w.t, w.ctx
	t.Helper()
	_, err := analytics.Migrate(ctx, w.cfg, slog.New(slog.DiscardHandler))
	w.must(err)
	w.note("Migrate")
	conn, err := analytics.Open(ctx, w.cfg)
	w.must(err)
	t.Cleanup(func() { conn.Close() })
	w.conn = conn
	lazy := analytics.NewLazy(w.cfg)
	_, err = lazy.Conn(ctx)
	w.must(err)
	w.must(lazy.Close())
	w.note("Open", "NewLazy")

	// Seeding: the writers, through the seeder, in two goes so that a
	// refresh has changes to read.
	o := seed.Options{Seed: 7, Listings: 240, Days: 45, ReviewsPerListing: 4, End: w.end.Add(-36 * time.Hour)}
	_, err = seed.Write(ctx, conn, o, seed.WriteOptions{Workers: 2})
	w.must(err)
	w.note("IsEmpty", "WriteListings", "WriteSnapshots", "WriteReviews")

	// The full load, in parts, with history; then what an incremental
	// refresh reads after new rows arrive.
	parts, err := analytics.SplitParts(ctx, conn, 40)
	w.must(err)
	w.note("SplitParts")
	if len(parts) < 6 {
		t.Fatalf("want parts with both bounds, got %v", parts)
	}
	r, err := analytics.LoadReplica(ctx, conn, analytics.ReplicaOptions{Generation: 1, History: true, PartSize: 40})
	w.must(err)
	w.note("LoadReplica", "ReadWatermarks")
	noHist, err := analytics.LoadReplica(ctx, conn, analytics.ReplicaOptions{Generation: 2, PartSize: 1000})
	w.must(err)
	b := replica.NewBuilder(noHist.Len())
	for i := range noHist.All() {
		b.Add(&noHist.All()[i])
	}
	w.must(analytics.AddHistory(ctx, conn, b, noHist.Info(), 60))
	w.note("AddHistory")
	more := o
	more.End = w.end
	more.Seed = 8
	_, err = seed.Write(ctx, conn, more, seed.WriteOptions{Append: true, Workers: 2})
	w.must(err)
	r2, n, err := analytics.RefreshReplica(ctx, conn, r, 3)
	w.must(err)
	if n == 0 {
		t.Fatal("the refresh read no changed listing")
	}
	// RefreshReplica sends its SQL through RefreshReplicaFrom.
	w.note("RefreshReplica", "RefreshReplicaFrom")

	// The change log: loaded whole, then what a refresh reads, and a
	// day's changes for the exports.
	changeLog, err := analytics.LoadChanges(ctx, conn, r, time.Unix(0, 0))
	w.must(err)
	if changeLog.Len() == 0 {
		t.Fatal("no change in the seeded versions")
	}
	refreshed, err := analytics.RefreshChanges(ctx, conn, r, r2, changeLog, time.Unix(0, 0))
	w.must(err)
	if refreshed.Len() < changeLog.Len() {
		t.Fatalf("%d changes after the refresh, %d before", refreshed.Len(), changeLog.Len())
	}
	for s := range views.NumStores {
		w.must(analytics.StreamDayChanges(ctx, conn, views.Store(s), views.DayOf(w.end)-3, func(*analytics.DayChange) error { return nil }))
	}
	w.note("LoadChanges", "RefreshChanges", "StreamDayChanges")

	// The ranks job and the week states of editions.
	days, err := analytics.DaysToRank(ctx, conn, w.end.Add(-10*24*time.Hour))
	w.must(err)
	if len(days) == 0 {
		t.Fatal("no day to rank")
	}
	for _, d := range days[:min(3, len(days))] {
		w.must(analytics.RankOneDay(ctx, conn, d, 50))
	}
	_, err = analytics.DaysToRank(ctx, conn, w.end.Add(-10*24*time.Hour))
	w.must(err)
	w.note("DaysToRank", "RankOneDay")
	_, err = analytics.LoadWeekState(ctx, conn, time.Date(2026, 7, 13, 0, 0, 0, 0, time.UTC), 50)
	w.must(err)
	first, last, err := analytics.DataSpan(ctx, conn)
	w.must(err)
	if !first.Before(last) {
		t.Fatalf("data span %v–%v", first, last)
	}
	w.note("LoadWeekState", "DataSpan")

	// Exports of a day, and counts.
	_, err = analytics.FirstReadingDay(ctx, conn)
	w.must(err)
	for s := range views.NumStores {
		w.must(analytics.StreamExportRows(ctx, conn, views.Store(s), views.DayOf(w.end)-2, func(*analytics.ExportRow) error { return nil }))
	}
	_, err = analytics.CountSnapshots(ctx, conn, r.Info().ReadingsMark)
	w.must(err)
	_, err = analytics.TableCounts(ctx, conn)
	w.must(err)
	w.note("FirstReadingDay", "StreamExportRows", "CountSnapshots", "TableCounts")

	// The lake's reads: a day's and the whole history's.
	for s := range views.NumStores {
		parts, err := analytics.StoreParts(ctx, conn, views.Store(s), 0)
		w.must(err)
		day := views.DayOf(w.end) - 2
		w.must(analytics.StreamDayReadings(ctx, conn, parts, day, day, func(*analytics.DayReading) error { return nil }))
		w.must(analytics.StreamDayReadings(ctx, conn, parts, 0, day, func(*analytics.DayReading) error { return nil }))
		w.must(analytics.StreamListingChanges(ctx, conn, parts, day.Time(), (day + 1).Time(), func(string, []changes.Change) error { return nil }))
		w.must(analytics.StreamListingChanges(ctx, conn, parts, time.Time{}, (day + 1).Time(), func(string, []changes.Change) error { return nil }))
		w.must(analytics.StreamReviewMeta(ctx, conn, parts, time.Time{}, (day + 1).Time(), func(*analytics.ReviewMeta) error { return nil }))
	}
	w.note("StoreParts", "StreamDayReadings", "StreamListingChanges", "StreamReviewMeta")

	// Per-request reads: history, series, relistings, reviews, search.
	var some []analytics.ListingKey
	all := r.All()
	for i := 0; i < len(all) && len(some) < analytics.MaxSeriesListings; i += len(all) / analytics.MaxSeriesListings {
		l := &all[i]
		some = append(some, analytics.ListingKey{Store: l.Store, ID: l.ID})
	}
	for _, k := range some[:3] {
		_, err := analytics.LoadDailyHistory(ctx, conn, k.Store, k.ID, w.end.Add(-30*24*time.Hour), 1000)
		w.must(err)
		_, err = analytics.LoadDailyHistory(ctx, conn, k.Store, k.ID, w.end.Add(-30*24*time.Hour), 5)
		w.must(err)
		_, err = analytics.LoadRelistings(ctx, conn, k.Store, k.ID, views.DayOf(w.end)-40)
		w.must(err)
	}
	_, err = analytics.LoadDailyReadings(ctx, conn, some, views.DayOf(w.end)-30, views.DayOf(w.end))
	w.must(err)
	_, err = analytics.LoadDailyReadings(ctx, conn, some[:1], views.DayOf(w.end)-7, views.DayOf(w.end))
	w.must(err)
	for _, k := range some[:3] {
		_, err := analytics.LoadReadingsAround(ctx, conn, k, views.GapFor(7*86400), w.end.Add(-8*24*time.Hour), w.end.Add(-24*time.Hour))
		w.must(err)
	}
	for _, s := range []views.Store{views.Chrome, views.Apple} {
		if ls := r.OfStore(s); len(ls) > 0 {
			_, err := analytics.LoadCategoryWeeks(ctx, conn, s, ls[0].Category, views.DayOf(w.end)-60, views.DayOf(w.end))
			w.must(err)
		}
	}
	_, err = analytics.LoadPermissionCounts(ctx, conn, views.DayOf(w.end)-1)
	w.must(err)
	w.note("LoadDailyHistory", "LoadRelistings", "LoadDailyReadings", "LoadReadingsAround", "LoadCategoryWeeks", "LoadPermissionCounts")
	// Two edges keep the same edition (the same bytes: editions are a
	// function of the data), maybe in the same second.
	w.must(analytics.StoreEdition(ctx, conn, "2026-W01", 1, []byte(`{"week":"2026-W01"}`)))
	w.must(analytics.StoreEdition(ctx, conn, "2026-W01", 1, []byte(`{"week":"2026-W01"}`)))
	_, err = analytics.LoadEditions(ctx, conn, 1)
	w.must(err)
	w.note("StoreEdition", "LoadEditions")
	var reviewed analytics.ListingKey
	for i := range all {
		if l := &all[i]; l.Store != views.Chrome {
			reviewed = analytics.ListingKey{Store: l.Store, ID: l.ID}
			break
		}
	}
	for _, q := range []analytics.ReviewQuery{
		{Store: reviewed.Store, ListingID: reviewed.ID, Stars: analytics.StarsAll, Limit: 3},
		{Store: reviewed.Store, ListingID: reviewed.ID, Stars: analytics.StarsCritical, Limit: 3,
			AfterPosted: w.end, AfterID: "zzz"},
		{Store: reviewed.Store, ListingID: reviewed.ID, Stars: analytics.StarsPositive, Text: "the", Limit: 3,
			Budget: analytics.SearchBudget{Time: time.Second, MaxRows: 1 << 20}},
	} {
		_, _, err := analytics.LoadReviews(ctx, conn, q)
		w.must(err)
	}
	w.note("LoadReviews")
	for i := 0; i < len(all) && len(w.searchIDs) < 40; i += 3 {
		w.searchIDs = append(w.searchIDs, all[i].ID)
	}
	store := views.Firefox
	for _, s := range []analytics.ReviewSearch{
		{Query: mustSearch(t, "great"), Stars: analytics.StarsAll, Min: 1, Limit: 20},
		{Query: mustSearch(t, `"works well" OR crash*`), Stars: analytics.StarsCritical, Store: &store, Min: 1, Limit: 10,
			Budget: analytics.SearchBudget{Time: 2 * time.Second, MaxRows: 1 << 24}},
		{Query: mustSearch(t, "the"), Stars: analytics.StarsPositive, Listings: w.searchIDs, Min: 2, Limit: 10},
	} {
		_, _, err := analytics.SearchReviews(ctx, conn, s)
		w.must(err)
	}
	w.note("SearchReviews")

	// Accounts, keys and the access log.
	now := w.end
	w.must(analytics.WriteAccount(ctx, conn, analytics.AccountRow{Email: "a@example.com", PasswordHash: "h1", CreatedAt: now}, now))
	w.must(analytics.WriteAccount(ctx, conn, analytics.AccountRow{Email: "b@example.com", PasswordHash: "h2", CreatedAt: now}, now))
	w.must(analytics.WriteAccount(ctx, conn, analytics.AccountRow{Email: "b@example.com", PasswordHash: "h2", Disabled: true, CreatedAt: now}, now.Add(time.Second)))
	w.must(analytics.WriteKey(ctx, conn, analytics.KeyRow{ID: "edge_aaaaaaaa", Email: "a@example.com", Hash: "k1", CreatedAt: now}, now))
	w.must(analytics.WriteKey(ctx, conn, analytics.KeyRow{ID: "edge_bbbbbbbb", Email: "a@example.com", Hash: "k2", DailyLimit: 5000, CreatedAt: now.Add(time.Second)}, now))
	w.must(analytics.WriteKey(ctx, conn, analytics.KeyRow{ID: "edge_bbbbbbbb", Email: "a@example.com", Hash: "k2", Revoked: true, CreatedAt: now.Add(time.Second)}, now.Add(2*time.Second)))
	w.note("WriteAccount", "WriteKey")
	_, _, err = analytics.LoadAccount(ctx, conn, "b@example.com")
	w.must(err)
	_, _, err = analytics.LoadAccount(ctx, conn, "nobody@example.com")
	w.must(err)
	_, err = analytics.LoadAccountStates(ctx, conn, nil)
	w.must(err)
	_, err = analytics.LoadAccountStates(ctx, conn, []string{"a@example.com", "b@example.com"})
	w.must(err)
	_, err = analytics.LoadKeys(ctx, conn, "a@example.com")
	w.must(err)
	_, err = analytics.LoadKeysByID(ctx, conn, nil)
	w.must(err)
	_, err = analytics.LoadKeysByID(ctx, conn, []string{"edge_bbbbbbbb"})
	w.must(err)
	_, _, err = analytics.LoadAccessChanges(ctx, conn, time.Unix(0, 0), 100)
	w.must(err)
	_, _, err = analytics.LoadAccessChanges(ctx, conn, time.Unix(0, 0), 1)
	w.must(err)
	_, err = analytics.ServerNow(ctx, conn)
	w.must(err)
	w.note("LoadAccount", "LoadAccountStates", "LoadKeys", "LoadKeysByID", "LoadAccessChanges", "ServerNow")

	// Webhooks: endpoints, where their deliveries stand, their log.
	hook := analytics.WebhookRow{ID: "wh_a", Email: "a@example.com", URL: "https://hooks.example.com/a", Kinds: "developer",
		Secret: "sealed", CreatedAt: now, Enabled: true}
	w.must(analytics.WriteWebhook(ctx, conn, hook, now))
	hook.Enabled, hook.DisabledWhy = false, "every delivery failed"
	w.must(analytics.WriteWebhook(ctx, conn, hook, now.Add(time.Second)))
	w.must(analytics.WriteWebhookRows(ctx, conn, []analytics.WebhookRow{{ID: "wh_b", Email: "b@example.com", URL: "https://hooks.example.com/b",
		Secret: "sealed", CreatedAt: now, Enabled: true}}, now))
	hooks, err := analytics.LoadWebhooks(ctx, conn, "")
	w.must(err)
	mine, err := analytics.LoadWebhooks(ctx, conn, "a@example.com")
	w.must(err)
	if len(hooks) != 2 || len(mine) != 1 || mine[0].Enabled {
		t.Fatalf("webhooks %+v, a's %+v", hooks, mine)
	}
	w.must(analytics.WriteWebhookCursors(ctx, conn, []analytics.WebhookCursor{{ID: "wh_a", Cursor: "c1"}, {ID: "wh_b", Cursor: "c2", FailingSince: now, Attempts: 3}}, now))
	cursors, err := analytics.LoadWebhookCursors(ctx, conn)
	w.must(err)
	if cursors["wh_b"].Attempts != 3 || !cursors["wh_b"].FailingSince.Equal(now) || !cursors["wh_a"].FailingSince.IsZero() {
		t.Fatalf("cursors %+v", cursors)
	}
	w.must(analytics.WriteWebhookDeliveries(ctx, conn, []analytics.WebhookDelivery{{ID: "wh_a", At: now, EventID: "e1", Type: "listing.version", Attempt: 1, Status: 204, LatencyMS: 3},
		{ID: "wh_a", At: now.Add(time.Second), EventID: "e2", Type: "listing.name", Attempt: 2, Error: "HTTP 500", Status: 500}}))
	log, err := analytics.LoadWebhookDeliveries(ctx, conn, "wh_a", 10)
	w.must(err)
	if len(log) != 2 || log[0].EventID != "e2" {
		t.Fatalf("delivery log %+v", log)
	}
	w.note("WriteWebhook", "WriteWebhookRows", "LoadWebhooks", "WriteWebhookCursors", "LoadWebhookCursors", "WriteWebhookDeliveries", "LoadWebhookDeliveries")

	// Usage: batches on three days, then every read of it.
	day := func(d int) time.Time { return time.Date(2026, 7, 10+d, 0, 0, 0, 0, time.UTC) }
	for i, d := range []int{0, 1, 2} {
		w.must(analytics.WriteUsage(ctx, conn, analytics.UsageBatch{Edge: "e1", Seq: uint64(i + 1)}, []analytics.UsageDelta{
			{Day: day(d), Subject: "key:edge_aaaaaaaa", Calls: 3}, {Day: day(d), Subject: "addr:192.0.2.1", Calls: 2}}, false))
		w.must(analytics.WriteUsage(ctx, conn, analytics.UsageBatch{Edge: "e2", Seq: uint64(i + 1)}, []analytics.UsageDelta{
			{Day: day(d), Subject: "key:edge_aaaaaaaa", Calls: 4}}, false))
	}
	// A batch of day 1 written again, after its first write arrived late.
	w.must(analytics.WriteUsage(ctx, conn, analytics.UsageBatch{Edge: "e1", Seq: 2}, []analytics.UsageDelta{
		{Day: day(1), Subject: "key:edge_aaaaaaaa", Calls: 3}, {Day: day(1), Subject: "addr:192.0.2.1", Calls: 2}}, true))
	_, err = analytics.LoadUsageSince(ctx, conn, day(2), time.Unix(0, 0))
	w.must(err)
	_, err = analytics.LoadUsageEdges(ctx, conn, day(0))
	w.must(err)
	_, err = analytics.HasUsageBatch(ctx, conn, analytics.UsageBatch{Edge: "e1", Seq: 2}, []time.Time{day(1), day(2)})
	w.must(err)
	usage, err := analytics.LoadUsage(ctx, conn, day(1))
	w.must(err)
	if usage["key:edge_aaaaaaaa"] != 7 || usage["addr:192.0.2.1"] != 2 {
		w.t.Fatalf("day 1's usage with a batch written twice: %v, want key 7 and addr 2", usage)
	}
	w.note("WriteUsage", "LoadUsageSince", "LoadUsageEdges", "HasUsageBatch", "LoadUsage")

	// The account routes' attempts: batches of two edges on two days,
	// then a read of them.
	for i, d := range []int{0, 1} {
		w.must(analytics.WriteAttempts(ctx, conn, []analytics.Attempt{
			{Edge: "e1", Seq: uint64(i + 1), Kind: 1, Subject: "00112233445566778899aabbccddeeff", Happened: day(d).Add(time.Hour + 250*time.Millisecond)},
			{Edge: "e2", Seq: uint64(i + 1), Kind: 3, Subject: "ffeeddccbbaa99887766554433221100", Happened: day(d).Add(2 * time.Hour)}}))
	}
	got, _, err := analytics.LoadAttemptsSince(ctx, conn, day(0))
	w.must(err)
	if len(got) != 4 || !slices.ContainsFunc(got, func(a analytics.Attempt) bool {
		return a.Edge == "e1" && a.Happened.Equal(day(0).Add(time.Hour+250*time.Millisecond))
	}) {
		w.t.Fatalf("attempts read back, to the millisecond: %+v", got)
	}
	of, err := analytics.LoadAttemptsOf(ctx, conn, "00112233445566778899aabbccddeeff", []uint8{1}, day(0))
	w.must(err)
	if len(of) != 2 {
		w.t.Fatalf("one subject's attempts read back: %+v", of)
	}
	w.note("WriteAttempts", "LoadAttemptsSince", "LoadAttemptsOf")

	// A migration run again finds everything applied, and the schema is
	// this release's.
	_, err = analytics.Migrate(ctx, w.cfg, slog.New(slog.DiscardHandler))
	w.must(err)
	unknown, err := analytics.CheckSchema(ctx, conn)
	w.must(err)
	if len(unknown) != 0 {
		w.t.Fatalf("migrations unknown to this release: %v", unknown)
	}
	w.note("CheckSchema")
}

// runDestructive calls what drops data: the usage retention, then Reset.
func (w *workload) runDestructive() {
	day := time.Date(2026, 7, 11, 0, 0, 0, 0, time.UTC)
	dropped, err := analytics.DropUsageBefore(w.ctx, w.conn, day)
	w.must(err)
	if len(dropped) != 1 {
		w.t.Fatalf("dropped usage days %v, want one", dropped)
	}
	_, err = analytics.DropUsageLogBefore(w.ctx, w.conn, day)
	w.must(err)
	_, err = analytics.DropWebhookDeliveriesBefore(w.ctx, w.conn, w.end.Add(24*time.Hour))
	w.must(err)
	dropped, err = analytics.DropAttemptsLogBefore(w.ctx, w.conn, day)
	w.must(err)
	if len(dropped) != 1 {
		w.t.Fatalf("dropped attempts days %v, want one", dropped)
	}
	w.note("DropUsageBefore", "DropUsageLogBefore", "DropWebhookDeliveriesBefore", "DropAttemptsLogBefore")
	// Reset empties the upstream tables: the tables' counts after it are
	// compared (upstream empty, the rest as they were).
	w.must(analytics.Reset(w.ctx, w.conn))
	w.note("Reset")
	for _, table := range []string{"listings", "snapshots", "reviews", "snapshots_latest", "series_daily", "daily_ranks", "daily_ranks_days"} {
		var n uint64
		w.must(w.conn.QueryRow(context.Background(), "SELECT count() FROM "+table).Scan(&n))
		if n != 0 {
			w.t.Errorf("after Reset, %s holds %d rows", table, n)
		}
	}
}

// checkCoverage fails when an exported function of the package that takes
// a connection (or the settings to open one) was not called: a new one
// must be added to the workload, so that its SQL is replayed too.
func (w *workload) checkCoverage() {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		w.t.Fatal(err)
	}
	var missing []string
	for _, p := range pkgs {
		for _, f := range p.Files {
			for _, d := range f.Decls {
				fn, ok := d.(*ast.FuncDecl)
				if !ok || fn.Recv != nil || !fn.Name.IsExported() || !sendsSQL(fn) {
					continue
				}
				if !w.called[fn.Name.Name] {
					missing = append(missing, fn.Name.Name)
				}
			}
		}
	}
	slices.Sort(missing)
	if len(missing) > 0 {
		w.t.Errorf("functions that send SQL are not in the replay's workload: %v", missing)
	}
}

// sendsSQL reports whether a function takes a driver.Conn or a Config.
func sendsSQL(fn *ast.FuncDecl) bool {
	for _, p := range fn.Type.Params.List {
		switch x := p.Type.(type) {
		case *ast.SelectorExpr:
			if x.Sel.Name == "Conn" {
				return true
			}
		case *ast.Ident:
			if x.Name == "Config" {
				return true
			}
		}
	}
	return false
}

func mustSearch(t *testing.T, q string) analytics.SearchQuery {
	t.Helper()
	s, err := analytics.ParseSearchQuery(q)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
