package webhooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/edge/egress"
	"github.com/edge-stats/edge/edge/eventfilter"
	"github.com/edge-stats/edge/edge/problem"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/document"
	"github.com/edge-stats/edge/views/served"
)

// SignIn checks a request's account credentials and returns the
// account's e-mail address, or the problem to answer (package account).
type SignIn func(c *fiber.Ctx) (string, error)

// API answers /account/webhooks.
type API struct {
	cfg    Config
	signIn SignIn
	db     *analytics.Lazy
	state  *views.Published[served.State]
	sealer *sealer // nil: webhooks are off
	client *http.Client
	log    *slog.Logger
	locks  accountLocks
	tests  testBudget
}

// NewAPI returns the webhook routes; with no key in cfg they answer 503.
func NewAPI(cfg Config, signIn SignIn, db *analytics.Lazy, state *views.Published[served.State], log *slog.Logger) (*API, error) {
	cfg = cfg.Defaults()
	a := &API{cfg: cfg, signIn: signIn, db: db, state: state, log: log, client: cfg.Policy.Client(cfg.Timeout)}
	a.tests.runs = cfg.Timeout
	if cfg.Key != "" {
		s, err := newSealer(cfg.Key)
		if err != nil {
			return nil, err
		}
		a.sealer = s
	}
	return a, nil
}

// Routes adds the routes to app.
func (a *API) Routes(app *fiber.App) {
	app.Get("/account/webhooks", a.guard(a.list))
	app.Post("/account/webhooks", a.guard(a.create))
	app.Get("/account/webhooks/:id", a.guard(a.get))
	app.Delete("/account/webhooks/:id", a.guard(a.remove))
	app.Post("/account/webhooks/:id/enable", a.guard(a.enable))
	app.Post("/account/webhooks/:id/test", a.guard(a.test))
}

// offRetry is the Retry-After, in seconds, of the routes' 503 while
// webhooks are off: only the operator turns them on, with a restart.
const offRetry = 3600

// guard signs the caller in (webhooks on) and passes its account on.
func (a *API) guard(h func(c *fiber.Ctx, email string) error) fiber.Handler {
	return func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderCacheControl, "no-store")
		if a.sealer == nil || a.db == nil {
			// Off by the operator's choice, not for a moment: as every
			// 503 of the service, it says when to ask again (an hour).
			return problem.New(http.StatusServiceUnavailable, "Webhooks are off on this service (its operator set no EDGE_WEBHOOK_KEY); poll /api/v1/events with since, or stream /api/v1/events/stream.").
				RetryAfter(offRetry)
		}
		email, err := a.signIn(c)
		if err != nil {
			return err
		}
		return h(c, email)
	}
}

// Endpoint is an endpoint as /account/webhooks gives it; its secret
// appears only in the answer that makes it.
type Endpoint struct {
	ID          string    `json:"id"`
	URL         string    `json:"url"`
	Store       string    `json:"store"`      // "" for every store
	Kind        string    `json:"kind"`       // "" for every kind
	Permission  string    `json:"permission"` // "" for any
	Secret      string    `json:"secret,omitempty"`
	CreatedAt   time.Time `json:"createdAt"`
	Enabled     bool      `json:"enabled"`
	DisabledWhy string    `json:"disabledWhy"`
}

func endpointOf(r analytics.WebhookRow) Endpoint {
	return Endpoint{ID: r.ID, URL: r.URL, Store: r.Stores, Kind: r.Kinds, Permission: r.Permission, CreatedAt: r.CreatedAt.UTC(),
		Enabled: r.Enabled, DisabledWhy: r.DisabledWhy}
}

// list answers GET /account/webhooks.
func (a *API) list(c *fiber.Ctx, email string) error {
	rows, err := a.load(c.UserContext(), email)
	if err != nil {
		return err
	}
	out := make([]Endpoint, len(rows))
	for i, r := range rows {
		out[i] = endpointOf(r)
	}
	return c.JSON(fiber.Map{"email": email, "maxEndpoints": a.cfg.PerAccount, "webhooks": out})
}

// load returns the account's endpoints.
func (a *API) load(ctx context.Context, email string) ([]analytics.WebhookRow, error) {
	conn, err := a.db.Conn(ctx)
	if err != nil {
		return nil, problem.ReadFailed("the webhooks", err)
	}
	rows, err := analytics.LoadWebhooks(ctx, conn, email)
	if err != nil {
		return nil, problem.ReadFailed("the webhooks", err)
	}
	return rows, nil
}

// find returns the account's endpoint named by the path, or a 404.
func (a *API) find(c *fiber.Ctx, email string) (analytics.WebhookRow, error) {
	rows, err := a.load(c.UserContext(), email)
	if err != nil {
		return analytics.WebhookRow{}, err
	}
	for _, r := range rows {
		if r.ID == c.Params("id") {
			return r, nil
		}
	}
	return analytics.WebhookRow{}, problem.New(http.StatusNotFound, "This account has no such webhook: list them with GET /account/webhooks.")
}

// createBody is the body of POST /account/webhooks.
type createBody struct {
	URL        string `json:"url"`
	Store      string `json:"store"`
	Kind       string `json:"kind"`
	Permission string `json:"permission"`
}

// maxCreateBody bounds the body of POST /account/webhooks.
const maxCreateBody = 8 << 10

// createBodyExample is the body of POST /account/webhooks as its
// refusals show it, with what its filters mean.
const createBodyExample = `{"url": "https://hooks.example.com/edge", "store": "chrome,edge", "kind": "developer,permissions", "permission": ""} ` +
	`(store, kind and permission filter as /api/v1/events does; leave them out for every event)`

// createBodyFields are createBody's JSON names, as a refusal lists them.
const createBodyFields = "url, store, kind and permission"

// readCreateBody reads the body of POST /account/webhooks, or returns the
// 400 that says what to change: the unknown field or the field of the
// wrong type it names, a body too long, not JSON or more than one value.
func readCreateBody(body []byte) (createBody, error) {
	var in createBody
	refuse := func(what string) error {
		return problem.New(http.StatusBadRequest, what+" Send a JSON object of at most 8 KiB: "+createBodyExample+".")
	}
	if len(body) > maxCreateBody {
		return in, refuse(fmt.Sprintf("The body is %d bytes, more than 8 KiB.", len(body)))
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	err := dec.Decode(&in)
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case err == nil && dec.More():
		return in, refuse("The body holds more than one JSON value: send one object.")
	case err == nil:
		return in, nil
	case errors.As(err, &typeErr) && typeErr.Field != "":
		return in, refuse(fmt.Sprintf("%s: give a %s, not a %s.", typeErr.Field, typeErr.Type, typeErr.Value))
	case errors.As(err, &typeErr):
		return in, refuse(fmt.Sprintf("The body is a JSON %s: send an object.", typeErr.Value))
	case errors.As(err, &syntaxErr):
		return in, refuse(fmt.Sprintf("The body is not JSON (%s, at byte %d).", err, syntaxErr.Offset))
	case errors.Is(err, io.EOF):
		return in, refuse("The body is empty (or white space only).")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return in, refuse("The body ends inside its JSON object.")
	}
	// The decoder's only other refusal is a field createBody does not
	// have: `json: unknown field "name"`.
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return in, refuse(fmt.Sprintf("The body has an unknown field %s: leave it out (the fields are %s).", name, createBodyFields))
	}
	return in, refuse(fmt.Sprintf("The body is not what this takes (%s).", err))
}

// create answers POST /account/webhooks: a new endpoint, with its secret
// shown this once. Deliveries start with the events after it was made.
func (a *API) create(c *fiber.Ctx, email string) error {
	// JSON only, declared so: a page elsewhere cannot make a signed-in
	// browser post a form here without a preflight.
	if mt, _, err := mime.ParseMediaType(c.Get(fiber.HeaderContentType)); err != nil || mt != fiber.MIMEApplicationJSON {
		return problem.New(http.StatusUnsupportedMediaType, `Send the body as JSON with the header Content-Type: application/json.`).
			WithHeader("Accept-Post", "application/json")
	}
	in, err := readCreateBody(c.Body())
	if err != nil {
		return err
	}
	if _, err := eventfilter.Parse(in.Store, in.Kind, in.Permission); err != nil {
		return err
	}
	u, err := a.cfg.Policy.CheckURL(c.UserContext(), strings.TrimSpace(in.URL))
	if err != nil {
		if why := egress.Reason(err); why != "" {
			a.log.Info("webhooks: a URL was refused", "reason", why) // the caller is told no more than PublicRefusal
			return problem.New(http.StatusBadRequest, "url: "+problem.Sentence(egress.PublicRefusal)+".")
		}
		return problem.New(http.StatusBadRequest, "url: "+problem.Sentence(err.Error())+". Give a public https URL of your own receiver.")
	}
	defer a.locks.lock(email)()
	rows, err := a.load(c.UserContext(), email)
	if err != nil {
		return err
	}
	if len(rows) >= a.cfg.PerAccount {
		return a.full(len(rows))
	}
	conn, err := a.db.Conn(c.UserContext())
	if err != nil {
		return problem.ReadFailed("the webhooks", err)
	}
	secret := newSecret()
	row := analytics.WebhookRow{ID: newID(), Email: email, URL: u.String(), Stores: in.Store, Kinds: in.Kind, Permission: in.Permission,
		CreatedAt: time.Now().UTC().Truncate(time.Second), Enabled: true}
	row.Secret = a.sealer.seal(row.ID, secret)
	// Where deliveries start: after the newest event now.
	cursor := ""
	if st := a.state.Load(); st != nil && st.Replica.Changes() != nil {
		cursor = document.EventCursor(st.Replica.Changes().Newest())
	}
	if err := analytics.WriteWebhookCursors(c.UserContext(), conn, []analytics.WebhookCursor{{ID: row.ID, Cursor: cursor}}, time.Now()); err != nil {
		return problem.ReadFailed("the webhooks", err)
	}
	if err := analytics.WriteWebhook(c.UserContext(), conn, row, time.Now()); err != nil {
		return problem.ReadFailed("the webhooks", err)
	}
	// Another edge of the fleet may have made one at the same moment:
	// read again, and keep the new endpoint only if the account is
	// within its most.
	if err := a.keepWithinLimit(c, email, row); err != nil {
		return err
	}
	doc := endpointOf(row)
	doc.Secret = secret
	return c.Status(http.StatusCreated).JSON(doc)
}

// full is the answer to a create past the account's most endpoints.
func (a *API) full(n int) error {
	return problem.Newf(http.StatusConflict, "This account has %d webhooks, its most: delete one first (DELETE /account/webhooks/{id}), or widen one's filters.", n)
}

// keepWithinLimit reads the account's endpoints after row was written,
// and removes row when they are past PerAccount. Creates racing on
// several edges each write and then read: the last of them to read sees
// every row the others wrote, so no account ends past its most (under
// contention at the limit, more than one may give up: each is told to
// ask again).
func (a *API) keepWithinLimit(c *fiber.Ctx, email string, row analytics.WebhookRow) error {
	rows, err := a.load(c.UserContext(), email)
	if err != nil {
		return err
	}
	if len(rows) <= a.cfg.PerAccount {
		return nil
	}
	row.Deleted, row.Enabled = true, false
	if err := a.write(c.UserContext(), row); err != nil {
		return err
	}
	return problem.Newf(http.StatusConflict, "This account's most is %d webhooks, and others were made at the same moment: list them (GET /account/webhooks), and ask again if it has fewer.", a.cfg.PerAccount)
}

// delivery is an attempt as the delivery log gives it.
type delivery struct {
	At        time.Time `json:"at"`
	EventID   string    `json:"eventId"`
	Type      string    `json:"type"`
	Attempt   uint32    `json:"attempt"`
	Status    uint16    `json:"status"` // 0: no answer
	LatencyMS uint32    `json:"latencyMs"`
	Error     string    `json:"error"`
}

// get answers GET /account/webhooks/{id}: the endpoint and its newest 100
// delivery attempts, newest first.
func (a *API) get(c *fiber.Ctx, email string) error {
	row, err := a.find(c, email)
	if err != nil {
		return err
	}
	conn, err := a.db.Conn(c.UserContext())
	if err != nil {
		return problem.ReadFailed("the webhooks", err)
	}
	ds, err := analytics.LoadWebhookDeliveries(c.UserContext(), conn, row.ID, 100)
	if err != nil {
		return problem.ReadFailed("the delivery log", err)
	}
	out := make([]delivery, len(ds))
	for i, d := range ds {
		out[i] = delivery{At: d.At.UTC(), EventID: d.EventID, Type: d.Type, Attempt: d.Attempt, Status: d.Status, LatencyMS: d.LatencyMS, Error: d.Error}
	}
	return c.JSON(fiber.Map{"webhook": endpointOf(row), "deliveries": out})
}

// remove answers DELETE /account/webhooks/{id}.
func (a *API) remove(c *fiber.Ctx, email string) error {
	row, err := a.find(c, email)
	if err != nil {
		return err
	}
	row.Deleted, row.Enabled = true, false
	if err := a.write(c.UserContext(), row); err != nil {
		return err
	}
	return c.SendStatus(http.StatusNoContent)
}

// enable answers POST /account/webhooks/{id}/enable: an endpoint disabled
// after a day of failures delivers again, from the event it stopped at.
func (a *API) enable(c *fiber.Ctx, email string) error {
	row, err := a.find(c, email)
	if err != nil {
		return err
	}
	if !row.Enabled {
		conn, err := a.db.Conn(c.UserContext())
		if err != nil {
			return problem.ReadFailed("the webhooks", err)
		}
		cursors, err := analytics.LoadWebhookCursors(c.UserContext(), conn)
		if err != nil {
			return problem.ReadFailed("the webhooks", err)
		}
		cur := cursors[row.ID]
		cur.ID, cur.FailingSince, cur.Attempts = row.ID, time.Time{}, 0
		if err := analytics.WriteWebhookCursors(c.UserContext(), conn, []analytics.WebhookCursor{cur}, time.Now()); err != nil {
			return problem.ReadFailed("the webhooks", err)
		}
		row.Enabled, row.DisabledWhy = true, ""
		if err := a.write(c.UserContext(), row); err != nil {
			return err
		}
	}
	return c.JSON(endpointOf(row))
}

func (a *API) write(ctx context.Context, row analytics.WebhookRow) error {
	conn, err := a.db.Conn(ctx)
	if err == nil {
		err = analytics.WriteWebhook(ctx, conn, row, time.Now())
	}
	if err != nil {
		return problem.ReadFailed("the webhooks", err)
	}
	return nil
}

// test answers POST /account/webhooks/{id}/test: a delivery of type
// webhook.test made now by this edge, signed as every delivery, its
// outcome answered and logged.
func (a *API) test(c *fiber.Ctx, email string) error {
	row, err := a.find(c, email)
	if err != nil {
		return err
	}
	release, wait, ok := a.tests.take(email, time.Now())
	if !ok {
		secs := max(1, int(math.Ceil(wait.Seconds())))
		return problem.Newf(http.StatusTooManyRequests, "This account may ask for %d test deliveries a minute, one at a time: ask again in %d s.", TestsPerMinute, secs).
			WithHeader("Retry-After", strconv.Itoa(secs))
	}
	defer release()
	secret, err := a.sealer.open(row.ID, row.Secret)
	if err != nil {
		return problem.New(http.StatusConflict, "This webhook's secret does not open with the service's key (the key was changed): delete the webhook and make it again.")
	}
	now := time.Now().UTC().Truncate(time.Second)
	id := "test_" + newID()[3:]
	body, _ := json.Marshal(Message{Type: "webhook.test", Timestamp: now, Data: endpointOf(row)})
	at := post(c.UserContext(), a.client, row.URL, secret, id, body)
	logRefusal(a.log, row.ID, at)
	if conn, err := a.db.Conn(c.UserContext()); err == nil {
		if err := analytics.WriteWebhookDeliveries(c.UserContext(), conn, []analytics.WebhookDelivery{deliveryRow(row.ID, now, id, "webhook.test", 1, at)}); err != nil {
			a.log.Warn("webhooks: a test delivery's log row was not written", "err", err)
		}
	}
	out := delivery{At: now, EventID: id, Type: "webhook.test", Attempt: 1, Status: uint16(at.status), LatencyMS: uint32(at.latency.Milliseconds())}
	if !at.ok() {
		out.Error = describe(at)
	}
	return c.JSON(fiber.Map{"delivered": at.ok(), "delivery": out})
}
