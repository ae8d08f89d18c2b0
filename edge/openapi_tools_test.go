package edge_test

import (
	"encoding/base64"
	"encoding/json"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edge-stats/edge/edge"
	"github.com/edge-stats/edge/edge/clientip"
	"github.com/edge-stats/edge/edge/edgetest"
	"github.com/edge-stats/edge/edge/egress"
	"github.com/edge-stats/edge/edge/limits"
	"github.com/edge-stats/edge/edge/stream"
	v1 "github.com/edge-stats/edge/edge/v1"
	"github.com/edge-stats/edge/edge/webhooks"
)

// openapiTools is the directory of the pinned OpenAPI tools (Spectral,
// Redocly, Dredd), which deploy/node.sh installs.
const openapiTools = "testdata/openapi"

// servedDescription writes the served description to a file of its own
// for the tools to read.
func servedDescription(t *testing.T) string {
	t.Helper()
	spec, err := v1.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "openapi.json")
	if err := os.WriteFile(path, spec, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// toolCommand runs the named tool of the pinned set with the Node.js
// of nodeDir.
func toolCommand(t *testing.T, tool string, args ...string) *exec.Cmd {
	t.Helper()
	dir := nodeDir(t)
	bin, err := filepath.Abs(filepath.Join(openapiTools, "node_modules", ".bin", tool))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%s is not installed (run deploy/node.sh): %v", tool, err)
	}
	cmd := exec.Command(filepath.Join(dir, "node"), append([]string{bin}, args...)...)
	cmd.Dir = openapiTools
	cmd.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"),
		"NO_UPDATE_NOTIFIER=1", "REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true")
	return cmd
}

// TestOpenAPILintsClean lints the served description as its consumers'
// tools do: Spectral with its spectral:oas ruleset (the recommended
// rules) and Redocly with its recommended ruleset. Every problem either
// reports, a hint as much as an error, fails the test.
func TestOpenAPILintsClean(t *testing.T) {
	spec := servedDescription(t)
	t.Run("spectral", func(t *testing.T) {
		cmd := toolCommand(t, "spectral", "lint", "--ruleset", "spectral.yaml", "--format", "json", "--quiet", "--fail-severity", "hint", spec)
		out, err := cmd.Output()
		var issues []struct {
			Code     string
			Message  string
			Path     []any
			Severity int
		}
		if jerr := json.Unmarshal(out, &issues); jerr != nil {
			t.Fatalf("spectral: %v (%v): %.2000s", jerr, err, out)
		}
		for _, is := range issues {
			t.Errorf("spectral %s (severity %d) at %v: %s", is.Code, is.Severity, is.Path, is.Message)
		}
		if err != nil && len(issues) == 0 {
			t.Fatalf("spectral: %v: %s", err, out)
		}
	})
	t.Run("redocly", func(t *testing.T) {
		cmd := toolCommand(t, "redocly", "lint", "--extends", "recommended", "--format", "json", spec)
		out, err := cmd.Output()
		var report struct {
			Totals   struct{ Errors, Warnings, Ignored int }
			Problems []struct {
				RuleID   string `json:"ruleId"`
				Severity string
				Message  string
				Location []struct{ Pointer string }
			}
		}
		if jerr := json.Unmarshal(out, &report); jerr != nil {
			t.Fatalf("redocly: %v (%v): %.2000s", jerr, err, out)
		}
		for _, p := range report.Problems {
			where := ""
			if len(p.Location) > 0 {
				where = p.Location[0].Pointer
			}
			t.Errorf("redocly %s (%s) at %s: %s", p.RuleID, p.Severity, where, p.Message)
		}
		if report.Totals.Errors+report.Totals.Warnings+report.Totals.Ignored != len(report.Problems) || err != nil && len(report.Problems) == 0 {
			t.Errorf("redocly: %v, totals %+v", err, report.Totals)
		}
	})
}

// dreddSummary is Dredd's last line: "complete: 33 passing, 0 failing, 0
// errors, 0 skipped, 33 total".
var dreddSummary = regexp.MustCompile(`complete: (\d+) passing, (\d+) failing, (\d+) errors, (\d+) skipped, (\d+) total`)

// TestDreddReplaysTheDescription runs Dredd on the served description
// against an edge holding the first 2,400 listings of `make run`'s demo
// dataset (edgetest.DemoSeed: the examples name its listings, and its
// days as a `make run` on 2026-12-01 has them, so that what a new user
// tries from the description works on the data they have; the answers'
// examples are its answers, checkAnswerExamples): it builds each operation's request from the description's
// examples alone, sends it, and checks the answer's status, headers and
// body against the description. The hooks (testdata/openapi/hooks.js) add
// what no description can hold: the key and the account's credentials,
// the API's prefix on the /api/v1 paths, the id of the webhook the replay
// registered; for every refusal an operation declares, the request that
// provokes it (testdata/openapi/refusals.js). Every answer of every
// operation must be replayed, none failing, but those the hooks skip
// saying why (the 503s of a cold or failing edge).
func TestDreddReplaysTheDescription(t *testing.T) {
	spec := servedDescription(t)
	h := start(t, seededWith(t, edgetest.DemoSeed(2400)),
		// Dredd sends one request an operation; the anonymous limits
		// are not what it checks.
		withLimits(limits.Policy{PerMinute: 1000, PerDay: 10000}, limits.Policy{PerMinute: 1000, PerDay: 10000}),
		func(c *edge.Config) {
			// The example endpoint's address is public (no delivery is
			// made to it but the test one, which fails at once here).
			// One webhook an account: the replay's second is its 409.
			c.Webhooks = webhooks.Config{Key: testWebhookKey, Timeout: time.Second, FirstTimeout: time.Second, Policy: egress.Policy{}, PerAccount: 1}
			// The refusals come each from a client address of its own
			// (X-Forwarded-For), so that the invalid keys and failed
			// sign-ins they send refuse nothing else.
			c.TrustedProxies = clientip.Prefixes{netip.MustParsePrefix("127.0.0.1/32")}
			// The stream ends after its backlog, so that Dredd reads it whole.
			c.Stream = stream.Config{MaxAge: time.Second}.Defaults()
		})
	for _, job := range []string{"views", "editions", "ranks", "exports"} {
		if err := h.Jobs.RunNow(job); err != nil {
			t.Fatal(job, err)
		}
	}
	// The account of the webhook examples.
	const email, password = "analyst@example.com", "long enough password"
	key, _ := signUpWithKey(t, h, email)
	// The answers' examples are the demo data's too (before Dredd, which
	// needs Node.js: they are checked without it).
	checkAnswerExamples(t, h, key)
	cmd := toolCommand(t, "dredd", spec, h.Base, "--hookfiles", "hooks.js", "--color", "false", "--loglevel", "warning")
	cmd.Env = append(cmd.Env, "EDGE_DREDD_SPEC="+spec, "EDGE_DREDD_KEY="+key,
		"EDGE_DREDD_BASIC="+base64.StdEncoding.EncodeToString([]byte(email+":"+password)))
	out, err := cmd.CombinedOutput()
	text := string(out)
	m := dreddSummary.FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("dredd: %v, no summary:\n%s", err, text)
	}
	n := make([]int, 5)
	for i := range n {
		n[i], _ = strconv.Atoi(m[i+1])
	}
	passing, failing, errs, skipped := n[0], n[1], n[2], n[3]
	if failing != 0 || errs != 0 || err != nil {
		var fails []string
		for _, l := range strings.Split(text, "\n") {
			if strings.Contains(l, "fail: ") || strings.Contains(l, "error: ") {
				fails = append(fails, strings.TrimSpace(l))
			}
		}
		t.Errorf("dredd: %d failing, %d errors (%v):\n%s\n\nits report's end:\n%s", failing, errs, err, strings.Join(fails, "\n"), tail(text, 12000))
	}
	// Every answer of every operation, in each of its media types, is
	// replayed: the successful ones from the description's examples, the
	// refusals from the requests the hooks make of them
	// (testdata/openapi/refusals.js); only those it names, each with why,
	// are skipped.
	var why []string
	for _, l := range strings.Split(text, "\n") {
		if _, w, ok := strings.Cut(l, "hooks.js: skipped "); ok {
			why = append(why, w)
		}
	}
	if total := n[4]; skipped != len(why) || passing+skipped != total {
		t.Errorf("dredd: %d passing and %d skipped of %d, %d of them said why:\n%s", passing, skipped, total, len(why), tail(text, 12000))
	}
	if want := successes(t, spec); passing < want {
		t.Errorf("dredd: %d passing, fewer than the %d successful answers the description declares", passing, want)
	}
	t.Logf("dredd: %d passing, %d skipped", passing, skipped)
}

// successes counts the successful answers the description at path
// declares: one for each media type of each operation's 2xx response
// (one for a response without a body).
func successes(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]json.RawMessage
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ops := range doc.Paths {
		for method, raw := range ops {
			if method == "servers" {
				continue
			}
			var op struct {
				Responses map[string]struct {
					Content map[string]json.RawMessage
				}
			}
			if err := json.Unmarshal(raw, &op); err != nil {
				t.Fatal(err)
			}
			for status, r := range op.Responses {
				if strings.HasPrefix(status, "2") {
					n += max(1, len(r.Content))
				}
			}
		}
	}
	return n
}

// tail returns the last n bytes of s.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}
