package render

import (
	"html/template"
	"strconv"
	"strings"
)

// Badge is a figure as a small image for a README or a site, drawn as
// the badge services draw theirs (two coloured boxes, a label and a
// message): Title is its whole text for readers and screen readers, the
// figure's definition with its value.
type Badge struct {
	Label, Message, Color, Title string
}

// Badge colours: a figure, a listing gone from its store, an error.
const (
	BadgeBlue = "#1a5fb4"
	BadgeGrey = "#6b7480"
	BadgeRed  = "#b42318"
)

// BadgeCSP is the Content-Security-Policy of a badge: an image with
// nothing to load or run.
const BadgeCSP = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors *"

// verdana holds the advance of the printable ASCII characters in Verdana
// at 11 px, in tenths of a pixel (the font the badges name first); other
// characters count as a wide letter. The text is drawn with textLength,
// so a font of other widths still fits its box.
var verdana = [95]uint8{
	39, 47, 55, 96, 70, 123, 80, 32, 55, 55, 70, 96, 40, 55, 40, 55, // space to /
	70, 70, 70, 70, 70, 70, 70, 70, 70, 70, 55, 55, 96, 96, 96, 60, // 0 to ?
	117, 75, 75, 77, 85, 70, 63, 85, 84, 46, 50, 76, 61, 94, 82, 87, // @ to O
	66, 87, 77, 75, 68, 81, 75, 110, 75, 68, 75, 55, 55, 55, 96, 70, // P to _
	70, 67, 69, 57, 69, 66, 39, 69, 71, 30, 38, 65, 30, 109, 71, 67, // ` to o
	69, 69, 47, 57, 43, 71, 65, 90, 65, 65, 58, 70, 55, 70, 96, // p to ~
}

// textWidth is s's width in Verdana 11 px, in tenths of a pixel.
func textWidth(s string) int {
	w := 0
	for _, r := range s {
		if r >= ' ' && r <= '~' {
			w += int(verdana[r-' '])
		} else {
			w += 90
		}
	}
	return w
}

// RenderBadge returns b as an SVG image of 20 px height.
func RenderBadge(b Badge) []byte {
	lw, mw := textWidth(b.Label), textWidth(b.Message)
	lbox, mbox := (lw+100)/10, (mw+100)/10 // 5 px each side
	total := lbox + mbox
	esc := template.HTMLEscapeString
	var s strings.Builder
	s.Grow(1024)
	itoa := strconv.Itoa
	s.WriteString(`<svg xmlns="http://www.w3.org/2000/svg" width="` + itoa(total) + `" height="20" role="img" aria-label="` + esc(b.Label+": "+b.Message) + `">`)
	s.WriteString(`<title>` + esc(b.Title) + `</title>`)
	s.WriteString(`<linearGradient id="s" x2="0" y2="100%"><stop offset="0" stop-color="#bbb" stop-opacity=".1"/><stop offset="1" stop-opacity=".1"/></linearGradient>`)
	s.WriteString(`<clipPath id="r"><rect width="` + itoa(total) + `" height="20" rx="3" fill="#fff"/></clipPath>`)
	s.WriteString(`<g clip-path="url(#r)"><rect width="` + itoa(lbox) + `" height="20" fill="#555"/><rect x="` + itoa(lbox) + `" width="` + itoa(mbox) + `" height="20" fill="` + esc(b.Color) + `"/><rect width="` + itoa(total) + `" height="20" fill="url(#s)"/></g>`)
	s.WriteString(`<g fill="#fff" text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,sans-serif" text-rendering="geometricPrecision" font-size="110">`)
	for _, t := range []struct {
		text   string
		center int // in tenths of a pixel
		width  int
	}{{b.Label, lbox * 5, lw}, {b.Message, lbox*10 + mbox*5, mw}} {
		x, l := itoa(t.center), itoa(t.width)
		s.WriteString(`<text aria-hidden="true" x="` + x + `" y="150" fill="#010101" fill-opacity=".3" transform="scale(.1)" textLength="` + l + `">` + esc(t.text) + `</text>`)
		s.WriteString(`<text x="` + x + `" y="140" transform="scale(.1)" fill="#fff" textLength="` + l + `">` + esc(t.text) + `</text>`)
	}
	s.WriteString(`</g></svg>`)
	return []byte(s.String())
}
