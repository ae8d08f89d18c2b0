package render

import (
	"html/template"
	"strings"
)

// embedStyle is an embedded chart's own style: the page's light colours,
// as an image shown on another site has no page style to take.
const embedStyle = `<style>text{font:11.5px system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;fill:#4a5561}.grid{stroke:#e3e7eb;stroke-width:1}` +
	`.line{fill:none;stroke:#1a73e8;stroke-width:2;stroke-linejoin:round}.dot{fill:#1a73e8}.jump{fill:none;stroke:#9a2b1b;stroke-width:2}` +
	`.end{font-size:12px;font-weight:600;fill:#1d232a}.pt circle{fill:transparent}.pt circle:hover{fill:#1a73e8}</style><rect width="100%" height="100%" fill="#fff"/>`

// EmbedSizeChart returns the size chart of a listing's page as an SVG
// image of its own, for another site to show: the same chart (its axis,
// its points' titles, its first and last values), its style inside it,
// and a title that names the listing, its store and the days.
func EmbedSizeChart(d ListingPage) []byte {
	svg := string(chart(d.Points, d.SizeMeasure))
	svg = strings.Replace(svg, `<svg class="chart" `, `<svg xmlns="http://www.w3.org/2000/svg" width="420" height="220" `, 1)
	title := d.Name + " (" + d.Store + "): size (" + d.SizeMeasure + "), daily"
	if len(d.Points) > 0 {
		title += ", " + d.Points[0].Day + " to " + d.Points[len(d.Points)-1].Day
	}
	i := strings.IndexByte(svg, '>') + 1
	return []byte(svg[:i] + "<title>" + template.HTMLEscapeString(title) + "</title>" + embedStyle + svg[i:])
}
