package answer

import (
	"bytes"
	"sync"

	"github.com/valyala/fasthttp"
)

// Page says where the page for people of an API answer is (docs/pages.md,
// *Where a page lives*): the answer's Link header names it beside the
// figures' definitions, as rel="alternate" of type text/html.
type Page uint8

const (
	// NoPage: the answer has no page (the Link names the definitions
	// alone).
	NoPage Page = iota
	// SamePage: the request's path without /api/v1 (and without a .csv
	// suffix), with the request's query: /api/v1/charts/chrome?chart=top
	// has /charts/chrome?chart=top.
	SamePage
	// ParentPage: the request's path without /api/v1 and its last
	// segment, without a query: a listing's history, growth, reviews and
	// changes have the listing's page, a store's statistics the store's.
	ParentPage
)

// apiPrefix is the path prefix of the versioned API, which a page's path
// lacks.
const apiPrefix = "/api/v1/"

// linkPool holds the buffers Link headers are built in: fasthttp copies
// the value, so a buffer is back in the pool as soon as it is set.
var linkPool = sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}

// setLink sets the Link header of an answer with a body: the figures'
// definitions, the page of the request uri when p names one, and the
// answer's own link-values (extra, each led by ", ").
func setLink(h *fasthttp.ResponseHeader, uri *fasthttp.URI, p Page, extra []byte) {
	if p == NoPage && extra == nil {
		h.SetCanonical(headerLink, linkDefinitions)
		return
	}
	bp := linkPool.Get().(*[]byte)
	b := append(AppendPageLink(append((*bp)[:0], linkDefinitions...), uri.Path(), uri.QueryString(), p), extra...)
	h.SetCanonical(headerLink, b)
	*bp = b[:0]
	linkPool.Put(bp)
}

// AppendPageLink appends to dst the link-value (RFC 8288) of the page of
// the API answer at path (decoded, as routed) and query (as sent):
// `, <target>; rel="alternate"; type="text/html"`, dst unchanged when path
// is not under /api/v1/. The target is the page's path (percent-encoded
// where a URI needs it) with, for SamePage, the query (whose escapes are
// kept, and every byte a URI may not hold encoded): nothing a caller
// sends can end the target or add a parameter to the link.
func AppendPageLink(dst, path, query []byte, p Page) []byte {
	if p == NoPage || !bytes.HasPrefix(path, []byte(apiPrefix)) {
		return dst
	}
	rest := path[len(apiPrefix)-1:] // keeps the leading '/'
	switch p {
	case SamePage:
		rest = bytes.TrimSuffix(rest, []byte(".csv"))
	case ParentPage:
		i := bytes.LastIndexByte(rest, '/')
		if i <= 0 {
			return dst
		}
		rest, query = rest[:i], nil
	}
	dst = append(dst, ", <"...)
	dst = appendEscaped(dst, rest, false)
	if len(query) > 0 {
		dst = append(dst, '?')
		dst = appendEscaped(dst, query, true)
	}
	return append(dst, `>; rel="alternate"; type="text/html"`...)
}

// appendEscaped appends s to dst with every byte outside RFC 3986's
// unreserved and reserved characters percent-encoded; '%' is kept as it
// is in a query (keepPercent: its escapes are the caller's), encoded in a
// decoded path. '?' and '#' are encoded in a path.
func appendEscaped(dst, s []byte, keepPercent bool) []byte {
	const hex = "0123456789ABCDEF"
	for _, c := range s {
		if uriSafe(c) || (c == '%' && keepPercent) || (keepPercent && c == '?') {
			dst = append(dst, c)
			continue
		}
		dst = append(dst, '%', hex[c>>4], hex[c&15])
	}
	return dst
}

// uriSafe reports whether c may stand as it is in a link's target: RFC
// 3986's unreserved characters and the reserved ones but '?' and '#'
// (which would end a path) and ',' and ';' (which a careless reader of a
// Link header splits values and parameters at).
func uriSafe(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	switch c {
	case '-', '.', '_', '~', ':', '/', '@', '!', '$', '&', '\'', '(', ')', '*', '+', '=':
		return true
	}
	return false
}
