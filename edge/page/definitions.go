package page

// Definition is what one figure means, as /definitions shows it: the
// same text as GET /api/v1/definitions.
type Definition struct {
	Name, Measures, Window, Cadence, Null string
}

// RenderDefinitions returns the page of every figure's definition, each
// with an anchor of its name (/definitions#size), which the pages' figure
// labels link to.
func RenderDefinitions(defs []Definition, jsonURL string) ([]byte, error) {
	return execute(definitionsPage, struct {
		Head Head
		Defs []Definition
	}{
		Head: Head{Title: "What the figures mean · edge",
			Description: "The definition of every figure the service publishes about store listings: what it measures, over which window, how often it changes and when it is null.",
			Alternates:  []Alternate{{"application/json", jsonURL, "the definitions as JSON"}}},
		Defs: defs,
	})
}

var definitionsPage = parse("definitions", `<h1>What the figures mean</h1>
<p>Every figure the listings' pages and the API give, with the window it covers, how often it changes, and when it has no value (shown as —).</p>
<dl>
{{range .Defs}}<dt id="{{.Name}}"><a href="#{{.Name}}">{{.Name}}</a></dt>
<dd>{{.Measures}}<br><span class="note">Window: {{.Window}} Changes: {{.Cadence}} None when: {{.Null}}</span></dd>
{{end}}</dl>`, nil)
