package render

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

var definitionsPage = parse("definitions", nil)
