// Package account is self-service accounts and keys under /account: a
// sign-up with an e-mail address and a password, then HTTP Basic sign-ins
// to list, make and revoke the account's API keys. Failed sign-ins and
// sign-ups are throttled.
package account

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/edge/attempts"
	"github.com/edge-stats/edge/edge/claims"
	"github.com/edge-stats/edge/edge/clientip"
	"github.com/edge-stats/edge/edge/keys"
	"github.com/edge-stats/edge/edge/problem"
)

// Config holds the account routes' settings.
type Config struct {
	SignInFailures      int              // failed sign-ins one client address may make at one e-mail address in SignInWindow (three times as many at any)
	SignInEmailFailures int              // failed sign-ins at one e-mail address from every client address together in SignInWindow
	SignInWindow        time.Duration    // the window of the sign-in limits
	SignUps             int              // accounts one client address may make an hour
	DefaultDailyLimit   uint64           // a key's daily limit when it has none of its own
	Proxies             clientip.Proxies // which connections may name the client, and in which header
	ReloadBudget        time.Duration    // how long the key list's reload after a change may take
	// MaxAddresses bounds the keys each of the sign-in and sign-up
	// counters holds (limits.DefaultMaxKeys when 0).
	MaxAddresses int
	// Shared is the fleet's attempts log (package attempts): with it the
	// limits count every edge's attempts; nil: this edge's alone.
	Shared attempts.Store
	// Fleet, when set, sends each attempt to the fleet's leading edge
	// while another edge leads (package claims), so that the limits hold
	// exactly across the fleet; this edge decides when it leads or the
	// leader cannot answer.
	Fleet *claims.Client
	// PublicURL is the service's public address: a request from its
	// origin changes accounts as one from the Host it names does.
	PublicURL string
	// CountWait bounds how long an attempt waits for the fleet's count:
	// a claim sent to the leader (past it this edge decides), and a
	// sign-up's decision on the fleet's attempts log, the wait behind the
	// decisions of the same address before it included (past it, 503).
	// 0: DefaultCountWait.
	CountWait time.Duration
}

// API answers /account.
type API struct {
	cfg      Config
	accounts *keys.Accounts
	registry *keys.Registry
	signIns  *signInGuard
	log      *slog.Logger
}

// New returns the account routes over accounts; a change of keys reloads
// registry at once, so that it works on this edge without waiting.
func New(cfg Config, accounts *keys.Accounts, registry *keys.Registry, log *slog.Logger) *API {
	return &API{cfg: cfg, accounts: accounts, registry: registry, signIns: newSignInGuard(cfg, log), log: log}
}

// Collectors returns the counters of the fleet's attempts (none without
// Config.Shared), for /metrics.
func (s *API) Collectors() []prometheus.Collector {
	if s.signIns.shared == nil {
		return nil
	}
	return s.signIns.shared.Collectors()
}

// ClaimsHandler is the leading edge's side of the fleet's claims (package
// claims): it decides each with this edge's windows.
func (s *API) ClaimsHandler() http.Handler { return claims.Handler(s.signIns) }

// StartAttempts reads the fleet's attempts of the limits' windows, every
// edge's (after a restart too: the log forgets none), and syncs once.
// Without Config.Shared it does nothing.
func (s *API) StartAttempts(ctx context.Context) error {
	if s.signIns.shared == nil {
		return nil
	}
	return s.signIns.shared.Start(ctx)
}

// RunAttempts syncs the fleet's attempts every interval, each sync within
// timeout, until ctx ends. Without Config.Shared it returns at once.
func (s *API) RunAttempts(ctx context.Context, interval, timeout time.Duration) {
	if s.signIns.shared != nil {
		s.signIns.shared.Run(ctx, interval, timeout)
	}
}

// Routes adds the account routes to app, and the refusal of cross-site
// changes to every route under /account added after them (package
// webhooks' too).
func (s *API) Routes(app *fiber.App) {
	app.Use("/account", s.crossSite)
	app.Post("/account", s.signUp)
	app.Get("/account/keys", s.listKeys)
	app.Post("/account/keys", s.createKey)
	app.Delete("/account/keys/:id", s.revokeKey)
}

func (s *API) reloadKeys(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.ReloadBudget)
	defer cancel()
	return s.registry.Load(ctx)
}

// maxCredentials bounds the decoded credentials of a sign-in: the longest
// address, its colon and the longest password at 4 bytes a character.
const maxCredentials = 254 + 1 + 4*keys.MaxPassword

// basicCredentials reads an Authorization header of the Basic scheme: the
// e-mail address (trimmed, in lower case, at most 254 bytes) and the
// password (at most 4 bytes a character of the longest password).
// Credentials longer than maxCredentials, padding included, are refused
// before any hashing, and a header too long to hold them before it is
// decoded. The strings are the caller's own.
func basicCredentials(header string) (email, password string, ok bool) {
	scheme, cred, _ := strings.Cut(strings.TrimSpace(header), " ")
	cred = strings.TrimSpace(cred)
	if !strings.EqualFold(scheme, "Basic") || len(cred) > base64.StdEncoding.EncodedLen(maxCredentials) {
		return "", "", false
	}
	raw, err := base64.StdEncoding.DecodeString(cred)
	email, password, ok = strings.Cut(string(raw), ":")
	if err != nil || !ok || len(raw) > maxCredentials {
		return "", "", false
	}
	email = strings.ToLower(strings.TrimSpace(email))
	if len(email) > 254 || len(password) > 4*keys.MaxPassword {
		return "", "", false
	}
	return email, password, true
}

// accountCredentials are the body of a sign-up.
type accountCredentials struct {
	Email    string `json:"email"`
	Password string `json:"password"`
}

// keyDoc describes a key in /account answers; the key itself appears
// only in the answer that creates it.
type keyDoc struct {
	ID         string    `json:"id"`
	Key        string    `json:"key,omitempty"`
	CreatedAt  time.Time `json:"createdAt"`
	Revoked    bool      `json:"revoked"`
	DailyLimit uint64    `json:"dailyLimit"`
}

func (s *API) keyDoc(k analytics.KeyRow) keyDoc {
	limit := k.DailyLimit
	if limit == 0 {
		limit = s.cfg.DefaultDailyLimit
	}
	return keyDoc{ID: k.ID, CreatedAt: k.CreatedAt.UTC(), Revoked: k.Revoked, DailyLimit: limit}
}

// accountProblem turns an account error into its answer.
func (s *API) accountProblem(err error) error {
	switch {
	case errors.Is(err, keys.ErrBadEmail), errors.Is(err, keys.ErrBadPassword), errors.Is(err, keys.ErrBadLimit):
		return problem.New(http.StatusBadRequest, problem.Sentence(err.Error())+".")
	case errors.Is(err, keys.ErrExists), errors.Is(err, keys.ErrTooManyKeys):
		return problem.New(http.StatusConflict, problem.Sentence(err.Error())+".")
	case errors.Is(err, keys.ErrNoKey), errors.Is(err, keys.ErrNoAccount):
		return problem.New(http.StatusNotFound, problem.Sentence(err.Error())+": list the account's keys with GET /account/keys.")
	case errors.Is(err, keys.ErrBusy):
		return problem.New(http.StatusServiceUnavailable, "Every password check is busy. Retry in 2 seconds.").RetryAfter(2)
	}
	s.log.Warn("account read failed", "err", err)
	return problem.ReadFailed("the account", err)
}

// signUp answers POST /account: it makes an account from a JSON body
// {"email", "password"}.
func (s *API) signUp(c *fiber.Ctx) error {
	c.Set(fiber.HeaderCacheControl, "no-store")
	addr := s.cfg.Proxies.Caller(c)
	// JSON only, declared so: a page elsewhere can make its visitors'
	// browsers post a form or text/plain body without a preflight, and
	// each visitor's address has a sign-up budget of its own.
	if !isJSON(c.Get(fiber.HeaderContentType)) {
		return problem.New(http.StatusUnsupportedMediaType,
			`Send the body as JSON with the header Content-Type: application/json: {"email": "name@example.com", "password": "at least 10 characters"}.`).
			WithHeader("Accept-Post", "application/json")
	}
	var in accountCredentials
	if err := json.Unmarshal(c.Body(), &in); err != nil {
		return problem.New(http.StatusBadRequest, `The body must be JSON: {"email": "name@example.com", "password": "at least 10 characters"}.`)
	}
	if err := s.signIns.signUp(c.UserContext(), addr); err != nil {
		return err
	}
	email, err := s.accounts.Create(c.UserContext(), in.Email, in.Password)
	if err != nil {
		return s.accountProblem(err)
	}
	return c.Status(http.StatusCreated).JSON(fiber.Map{"email": email, "maxKeys": keys.MaxKeys})
}

// isJSON reports whether a Content-Type names JSON: application/json or
// a +json type, parameters (a charset) allowed.
func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == "application/json" || strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))
}

// SignIn checks the request's HTTP Basic credentials (e-mail address and
// password), throttled as every sign-in, and returns the account's
// address or the problem to answer: for routes of other packages under
// /account (package webhooks).
func (s *API) SignIn(c *fiber.Ctx) (string, error) { return s.signIn(c) }

// signIn checks the request's HTTP Basic credentials (e-mail address and
// password) and returns the account's address. Failures are throttled per
// e-mail address and per client address.
func (s *API) signIn(c *fiber.Ctx) (string, error) {
	c.Set(fiber.HeaderCacheControl, "no-store")
	addr := s.cfg.Proxies.Caller(c)
	refuse := func() *problem.Problem {
		return problem.New(http.StatusUnauthorized,
			"Sign in with HTTP Basic authentication: the account's e-mail address as user name and its password.").
			WithHeader(fiber.HeaderWWWAuthenticate, `Basic realm="edge account", charset="UTF-8"`)
	}
	email, password, ok := basicCredentials(c.Get(fiber.HeaderAuthorization))
	if !ok {
		return "", refuse()
	}
	r, ok, wait := s.signIns.reserve(c.UserContext(), email, addr)
	if !ok {
		return "", problem.Newf(http.StatusTooManyRequests, "Too many failed sign-ins for this account or from your address. Retry in %d seconds.",
			problem.Seconds(wait)).RetryAfter(problem.Seconds(wait))
	}
	account, err := s.accounts.SignIn(c.UserContext(), email, password)
	if errors.Is(err, keys.ErrSignIn) {
		s.signIns.settle(c.UserContext(), r, true)
		p := refuse()
		p.Detail = "The e-mail address or the password is wrong, or the account is disabled. " + p.Detail
		return "", p
	}
	s.signIns.settle(c.UserContext(), r, false)
	if errors.Is(err, keys.ErrBusy) {
		return "", problem.New(http.StatusServiceUnavailable, "Every password check is busy. Retry in 2 seconds.").RetryAfter(2)
	}
	if err != nil {
		s.log.Warn("sign-in read failed", "err", err)
		return "", problem.ReadFailed("the account", err)
	}
	return account, nil
}

// listKeys answers GET /account/keys: the account's keys, revoked ones
// included, without the keys themselves.
func (s *API) listKeys(c *fiber.Ctx) error {
	email, err := s.signIn(c)
	if err != nil {
		return err
	}
	rows, err := s.accounts.Keys(c.UserContext(), email)
	if err != nil {
		return s.accountProblem(err)
	}
	out := make([]keyDoc, len(rows))
	for i, k := range rows {
		out[i] = s.keyDoc(k)
	}
	return c.JSON(fiber.Map{"email": email, "keys": out})
}

// createKey answers POST /account/keys: a new key, shown this once. It
// works on this edge at once and on every edge after their next key
// reload.
func (s *API) createKey(c *fiber.Ctx) error {
	email, err := s.signIn(c)
	if err != nil {
		return err
	}
	key, row, err := s.accounts.CreateKey(c.UserContext(), email)
	if err != nil {
		return s.accountProblem(err)
	}
	if err := s.reloadKeys(c.UserContext()); err != nil {
		s.log.Warn("key list reload after a new key failed; the key works after the next reload", "err", err)
	}
	doc := s.keyDoc(row)
	doc.Key = key
	return c.Status(http.StatusCreated).JSON(doc)
}

// revokeKey answers DELETE /account/keys/{id}.
func (s *API) revokeKey(c *fiber.Ctx) error {
	email, err := s.signIn(c)
	if err != nil {
		return err
	}
	if err := s.accounts.Revoke(c.UserContext(), email, c.Params("id")); err != nil {
		return s.accountProblem(err)
	}
	if err := s.reloadKeys(c.UserContext()); err != nil {
		s.log.Warn("key list reload after a revocation failed; the key stops after the next reload", "err", err)
	}
	return c.SendStatus(http.StatusNoContent)
}
