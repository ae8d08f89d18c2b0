package analytics_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/edge-stats/edge/analytics"
)

// expandStatement matches the statements an expand migration may hold:
// each only adds (a table, a view, a column) or fills what it added, so
// that the release before keeps serving on the schema it leaves.
var expandStatement = []*regexp.Regexp{
	regexp.MustCompile(`(?is)^CREATE TABLE IF NOT EXISTS \w+ `),
	regexp.MustCompile(`(?is)^CREATE MATERIALIZED VIEW IF NOT EXISTS \w+ TO \w+ AS\s+SELECT\s`),
	regexp.MustCompile(`(?is)^ALTER TABLE \w+ ADD COLUMN \w+ [\w()]+ DEFAULT [^;]+$`),
	regexp.MustCompile(`(?is)^INSERT INTO \w+ \([\w, ]+\)\s+SELECT `),
}

// resets are the expand migrations that drop a table all the same, with
// why the release before still serves beside them: each drops a table a
// job derives and makes it again with the same columns in the same
// migration, so an earlier release reads the same schema (empty until
// the job fills it again). No new one may be added: a migration that
// removes or changes what an earlier release reads is a contract
// migration (<version>_<name>.contract.sql).
var resets = map[string]string{
	"0004_ranks_rule.sql": "daily_ranks_days is dropped and made again with the same columns: the ranks job ranks every day again",
}

// TestMigrationsOnlyExpand enforces what docs/operations.md, Upgrades,
// promises: every migration not named .contract.sql only adds, so two
// adjacent releases serve together on the later one's schema.
func TestMigrationsOnlyExpand(t *testing.T) {
	ms, err := analytics.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) < 11 {
		t.Fatalf("%d migrations embedded, want every one of them", len(ms))
	}
	for _, m := range ms {
		if analytics.Contract(m.Name) {
			continue
		}
		_, reset := resets[m.Name]
		dropped := map[string]bool{}
		for _, s := range m.Statements {
			if reset {
				if d := regexp.MustCompile(`(?i)^DROP TABLE IF EXISTS (\w+)$`).FindStringSubmatch(s); d != nil {
					dropped[d[1]] = true
					continue
				}
			}
			if !expands(s) {
				t.Errorf("%s: %q does not only add: an expand migration may create (IF NOT EXISTS), add a column with a default, or fill what it added; anything else is a contract migration (.contract.sql)", m.Name, firstLine(s))
			}
		}
		for table := range dropped {
			if !remade(m.Statements, table) {
				t.Errorf("%s drops %s and does not make it again", m.Name, table)
			}
		}
		if reset && len(dropped) == 0 {
			t.Errorf("%s is listed as a reset but drops nothing: take it off the list", m.Name)
		}
	}
}

func expands(stmt string) bool {
	for _, re := range expandStatement {
		if re.MatchString(stmt) {
			return true
		}
	}
	return false
}

func remade(stmts []string, table string) bool {
	for _, s := range stmts {
		if strings.HasPrefix(strings.ToUpper(s), "CREATE TABLE IF NOT EXISTS "+strings.ToUpper(table)+" ") {
			return true
		}
	}
	return false
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// TestExpandRulesRefuseWhatContracts checks the rules themselves: what
// removes or changes a schema is refused.
func TestExpandRulesRefuseWhatContracts(t *testing.T) {
	for _, tc := range []struct {
		stmt string
		want bool
	}{
		{"CREATE TABLE IF NOT EXISTS t (a UInt8) ENGINE = MergeTree ORDER BY a", true},
		{"ALTER TABLE usage_log ADD COLUMN retry UInt8 DEFAULT 0", true},
		{"CREATE MATERIALIZED VIEW IF NOT EXISTS v TO t AS SELECT a FROM s", true},
		{"INSERT INTO series_daily (store, id)\nSELECT store, id FROM snapshots", true},
		{"DROP TABLE usage", false},
		{"DROP TABLE IF EXISTS usage", false},
		{"ALTER TABLE usage DROP COLUMN calls", false},
		{"ALTER TABLE usage MODIFY COLUMN calls UInt32", false},
		{"ALTER TABLE usage ADD COLUMN c UInt8", false}, // no default: an earlier release's inserts fail
		{"RENAME TABLE usage TO usage_old", false},
		{"TRUNCATE TABLE usage", false},
		{"ALTER TABLE usage DELETE WHERE 1", false},
		{"CREATE TABLE t (a UInt8) ENGINE = MergeTree ORDER BY a", false},
	} {
		if got := expands(tc.stmt); got != tc.want {
			t.Errorf("expands(%q) = %v, want %v", tc.stmt, got, tc.want)
		}
	}
}
