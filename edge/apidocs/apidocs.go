// Package apidocs serves the API's reference for people: /docs renders the
// served OpenAPI description with Redoc, vendored at a pinned version and
// embedded in the binary (nothing is loaded from another host), and /
// points to /docs, the description and the tool server.
package apidocs

import (
	_ "embed"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/accept"
	"github.com/edge-stats/edge/edge/answer"
)

// RedocVersion is the vendored Redoc release (assets/README.md).
const RedocVersion = "2.5.4"

// redocSHA256 is the checksum of the vendored file, as published.
const redocSHA256 = "dcaf76612bc4a3fbcc923a8966dee2f6146a5f32e5ce1b6f02dd60cbbf89500b"

//go:embed assets/redoc.standalone-2.5.4.js
var redocJS []byte

// ScriptPath is where the script is served: its name carries the version,
// so it is cached for a year and a new release gets a new address.
const ScriptPath = "/docs/redoc.standalone-" + RedocVersion + ".js"

// InitPath is the script that starts Redoc on the page's element. Redoc's
// own start reads a <redoc> element, which HTML does not allow (a custom
// element's name has a hyphen), so the page names a div and this script
// gives it to Redoc.init. Its name is versioned like the script's: a
// browser that keeps an old script keeps its old start with it.
const InitPath = "/docs/redoc-init-1.js"

// redocInit starts Redoc on the div #redoc with the served description.
const redocInit = `Redoc.init("/api/v1/openapi.json", {}, document.getElementById("redoc"));
`

// docsPage renders the description at /api/v1/openapi.json.
const docsPage = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>edge — API reference</title>
<style>body{margin:0}</style>
</head>
<body>
<div id="redoc"></div>
<script src="` + ScriptPath + `"></script>
<script src="` + InitPath + `"></script>
</body>
</html>
`

// homePage is / for a browser.
const homePage = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>edge — store listing figures</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40em;margin:3em auto;padding:0 1em}code{font-size:90%}</style>
</head>
<body>
<h1>edge</h1>
<p>Read-only figures about listings (extensions and apps) in the chrome, edge, firefox, apple and googleplay stores.</p>
<ul>
<li><a href="/docs">API reference</a> (<code>/docs</code>)</li>
<li><a href="/api/v1/openapi.json">OpenAPI description</a> (<code>/api/v1/openapi.json</code>)</li>
<li>Tools for AI agents over MCP: <code>/mcp</code> (Streamable HTTP)</li>
<li>The unversioned API: <code>/api/extensions</code>, <code>/api/summary</code></li>
</ul>
</body>
</html>
`

// homeJSON is / for a program.
const homeJSON = `{"name":"edge","description":"Read-only figures about listings in the chrome, edge, firefox, apple and googleplay stores.",` +
	`"docs":"/docs","openapi":"/api/v1/openapi.json","mcp":"/mcp","api":"/api/v1"}`

// contentSecurity lets the reference page run the embedded script and
// nothing from elsewhere: Redoc sets inline styles and runs its search in
// a worker made from a blob.
const contentSecurity = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Routes serves /, /docs and the script, each answer sent by respond.
func Routes(app *fiber.App, respond answer.Responder) {
	script := answer.New(redocJS, "text/javascript; charset=utf-8").Tag("edge", "docs")
	start := answer.New([]byte(redocInit), "text/javascript; charset=utf-8").Tag("edge", "docs")
	docs := answer.New([]byte(docsPage), fiber.MIMETextHTMLCharsetUTF8).Tag("edge", "docs")
	home := answer.New([]byte(homePage), fiber.MIMETextHTMLCharsetUTF8).Tag("edge", "docs")
	homeAsJSON := answer.New([]byte(homeJSON), fiber.MIMEApplicationJSON).Tag("edge", "docs")
	app.Get(ScriptPath, respond.Handle(func(*fiber.Ctx) (answer.Reply, error) {
		return answer.Reply{Answer: script, CacheControl: "public, max-age=31536000, immutable"}, nil
	}))
	app.Get(InitPath, respond.Handle(func(*fiber.Ctx) (answer.Reply, error) {
		return answer.Reply{Answer: start, CacheControl: "public, max-age=31536000, immutable"}, nil
	}))
	app.Get("/docs", respond.Handle(func(c *fiber.Ctx) (answer.Reply, error) {
		c.Set(fiber.HeaderContentSecurityPolicy, contentSecurity)
		c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
		return answer.Reply{Answer: docs, CacheControl: "public, max-age=3600"}, nil
	}))
	app.Get("/", respond.Handle(func(c *fiber.Ctx) (answer.Reply, error) {
		c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
		if !accept.Prefers(c.Request().Header.Peek(fiber.HeaderAccept), fiber.MIMETextHTML, fiber.MIMEApplicationJSON) {
			return answer.Reply{Answer: homeAsJSON, CacheControl: "public, max-age=3600", VaryAccept: true}, nil
		}
		c.Set(fiber.HeaderContentSecurityPolicy, contentSecurity)
		return answer.Reply{Answer: home, CacheControl: "public, max-age=3600", VaryAccept: true}, nil
	}))
}
