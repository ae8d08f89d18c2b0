// Package keys says who a caller of the API is: it makes API keys (random,
// shown once, stored only as a SHA-256 hash under a short public id),
// holds every active key in memory for the request path (reloaded from
// ClickHouse by a background job), and manages accounts (an e-mail address
// and an argon2id password hash) and their keys.
package keys
