package chtest

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestConfigMatchesDeployTemplate checks that the test servers' settings
// are the development server's but for the three that differ on purpose
// (logger, mark cache, memory per query).
func TestConfigMatchesDeployTemplate(t *testing.T) {
	tmpl, err := os.ReadFile("../../deploy/clickhouse.xml.tmpl")
	if err != nil {
		t.Fatal(err)
	}
	differ := regexp.MustCompile(`(?m)^\s*<(logger|mark_cache_size|profiles)>.*$\n?`)
	comment := regexp.MustCompile(`(?s)<!--.*?-->\n?`)
	norm := func(s string) string {
		s = comment.ReplaceAllString(s, "")
		s = differ.ReplaceAllString(s, "")
		return strings.TrimSpace(s)
	}
	dev := strings.NewReplacer("@DIR@", "/d", "@TCP@", "1", "@HTTP@", "2").Replace(string(tmpl))
	if got, want := norm(ConfigXML("/d", 1, 2)), norm(dev); got != want {
		t.Fatalf("the test servers' settings differ from deploy/clickhouse.xml.tmpl beyond the three allowed:\n%s\n---\n%s", got, want)
	}
}
