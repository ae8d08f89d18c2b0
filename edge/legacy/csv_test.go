package legacy

import "testing"

func TestCSVText(t *testing.T) {
	for in, want := range map[string]string{
		`=HYPERLINK("http://x","a")`: `'=HYPERLINK("http://x","a")`, "+1 Reader": "'+1 Reader", "-Tabs": "'-Tabs",
		"@cmd": "'@cmd", "\tTabbed": "'\tTabbed", "\rx": "'\rx", "Plain": "Plain", "": "", "a=b": "a=b", "'quoted": "'quoted",
	} {
		if got := CSVText(in); got != want {
			t.Errorf("CSVText(%q) = %q, want %q", in, got, want)
		}
	}
}
