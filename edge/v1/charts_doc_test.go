package v1

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/edge-stats/edge/views"
)

// TestChartDescriptionsAgree keeps every description of the trending and
// rising charts saying what the code does (the fourth review found the
// OpenAPI description ranking "only listings whose newest reading is
// within a day of the data's newest", which the code never did): each
// names the window's length and its lag from views.ChartDays and
// views.ChartLag, says rising ranks by the percent as published, and none
// claims a freshness rule.
func TestChartDescriptionsAgree(t *testing.T) {
	spec, err := os.ReadFile("openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	figures, err := os.ReadFile("../../docs/figures.md")
	if err != nil {
		t.Fatal(err)
	}
	var charts Definition
	for _, d := range Definitions {
		if d.Name == "charts" {
			charts = d
		}
	}
	op := regexp.MustCompile(`(?s)operationId: getChart.*?description: \|(.*?)parameters:`).FindSubmatch(spec)
	bullet := regexp.MustCompile(`(?s)- \*\*Charts\*\*(.*?)\n- \*\*`).FindSubmatch(figures)
	if op == nil || bullet == nil {
		t.Fatal("the chart descriptions were not found")
	}
	lag := map[int]string{3: "three days before"}[int(views.ChartLag.Hours()/24)]
	if lag == "" || views.ChartDays != 7 {
		t.Fatalf("the charts' window changed (%d days, %v before): say so in every description, then here", views.ChartDays, views.ChartLag)
	}
	for name, text := range map[string]string{"the OpenAPI description": string(op[1]), "docs/figures.md": string(bullet[1]), "the definition": charts.Window} {
		flat := strings.Join(strings.Fields(text), " ")
		for _, want := range []string{lag, "7 days", "as published", "growth.7d"} {
			if !strings.Contains(flat, want) {
				t.Errorf("%s does not say %q: %s", name, want, flat)
			}
		}
		if strings.Contains(flat, "within a day") {
			t.Errorf("%s claims a freshness rule the code does not apply: %s", name, flat)
		}
	}
}
