package edge_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/analytics/chtest"
	"github.com/edge-stats/edge/analytics/seed"
	"github.com/edge-stats/edge/edge/edgetest"
	"github.com/edge-stats/edge/views"
)

// TestClusterAnswersAsOneServer seeds a cluster of two shards (the first
// of two replicas, through ZooKeeper) and one server with the same data,
// starts an edge over each, and asks both every kind of route: the
// summary, charts, statistics, editions, listings, history, growth,
// comparisons, reviews, review search and the exports' files. Every
// answer is the same bytes. A key made through the edge over the cluster
// is seen by a second edge over it, and with the first replica of a
// shard stopped, its edge's reads go on through the other.
func TestClusterAnswersAsOneServer(t *testing.T) {
	single := chtest.Need(t, srv)
	c, err := chtest.StartCluster(2, 1)
	switch {
	case err == nil:
		defer c.Stop()
		defer func() {
			if t.Failed() {
				for _, s := range c.Servers() {
					path, err := s.SaveLog(testOut(t))
					t.Logf("%s: log in %s (%v); its end:\n%s", s.Addr, path, err, s.Log())
				}
			}
		}()
	case (errors.Is(err, chtest.ErrNoZooKeeper) || errors.Is(err, chtest.ErrNoBinary)) && os.Getenv("CI") != "true":
		t.Skip(err)
	default:
		t.Fatal(err)
	}
	ctx := context.Background()
	ccfg, drop, err := c.Migrated(ctx, fmt.Sprintf("edge_cluster_%d", os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	defer drop()
	o := edgetest.Seed(400)
	cconn, err := analytics.Open(ctx, ccfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := seed.Write(ctx, cconn, o, seed.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	cconn.Close()
	scfg, sconn := single.Migrated(t)
	if _, err := seed.Write(ctx, sconn, o, seed.WriteOptions{}); err != nil {
		t.Fatal(err)
	}

	one, many := start(t, edgetest.Dataset{CH: &scfg}), start(t, edgetest.Dataset{CH: &ccfg})
	for _, h := range []*harness{one, many} {
		for _, job := range []string{"views", "editions", "exports"} {
			if err := h.Jobs.RunNow(job); err != nil {
				t.Fatal(job, err)
			}
		}
	}
	st := one.State.Load()
	var paths []string
	for _, s := range views.Stores {
		paths = append(paths, "/api/v1/charts/"+s.String()+"?chart=trending", "/api/v1/charts/"+s.String()+"?chart=climbers",
			"/api/v1/stores/"+s.String()+"/stats")
		ls := st.Replica.OfStore(s)
		for i := 0; i < len(ls); i += len(ls)/4 + 1 {
			base := "/api/v1/listings/" + s.String() + "/" + url.PathEscape(ls[i].ID)
			paths = append(paths, base, base+"/history?days=10", base+"/reviews", base+"/growth?from=2026-02-20",
				base+"/growth?from="+url.QueryEscape("2026-02-20T12:00:00Z"),
				"/listings/"+s.String()+"/"+url.PathEscape(ls[i].ID))
		}
	}
	chrome, firefox := firstLive(t, one, views.Chrome), firstLive(t, one, views.Firefox)
	paths = append(paths, "/api/summary", "/api/extensions?limit=50", "/api/v1/week", "/api/v1/weeks", "/api/v1/listings?limit=100",
		"/api/v1/compare?listings="+url.QueryEscape("chrome:"+chrome.ID+",firefox:"+firefox.ID),
		"/api/v1/reviews/search?q=the&stars=all", "/api/v1/exports", "/api/v1/categories/chrome", "/api/v1/tags",
		"/api/v1/changes?limit=100", "/api/v1/charts/chrome?chart=top", "/api/v1/charts/apple?chart=new")
	ok := 0
	for _, p := range paths {
		a, b := get(t, "GET", one.Base+p), get(t, "GET", many.Base+p)
		if b.status != a.status || !bytes.Equal(a.body, b.body) {
			t.Errorf("%s: one server %d (%d bytes), cluster %d (%d bytes):\n%.300s\n%.300s", p, a.status, len(a.body), b.status, len(b.body), a.body, b.body)
		}
		if a.status == 200 {
			ok++
		}
	}
	if ok < len(paths)*9/10 {
		t.Errorf("only %d of %d answers are 200s: the test compares too little", ok, len(paths))
	}
	// The exports' files, byte for byte (a key is needed).
	key, _ := signUpWithKey(t, one, "one@example.com")
	ckey, _ := signUpWithKey(t, many, "many@example.com")
	l := getOK[exportsListing](t, one.Base+"/api/v1/exports")
	for _, f := range l.Days[0].Files {
		a := call(t, "GET", one.Base+f.URL, map[string]string{"Authorization": "Bearer " + key}, "")
		b := call(t, "GET", many.Base+f.URL, map[string]string{"Authorization": "Bearer " + ckey}, "")
		if a.status != 200 || b.status != 200 || !bytes.Equal(a.body, b.body) {
			t.Errorf("%s: one server %d (%d bytes), cluster %d (%d bytes)", f.URL, a.status, len(a.body), b.status, len(b.body))
		}
	}
	t.Logf("%d answers and %d export files the same", len(paths), len(l.Days[0].Files))

	// Keys and usage made through one edge are seen by another, over a
	// database of their own on the cluster.
	// Two more databases, made while every server is up (DDL on the
	// cluster waits for every server).
	var fleetDBs [2]edgetest.Dataset
	for i := range fleetDBs {
		cfg, drop, err := c.Migrated(ctx, fmt.Sprintf("edge_keys_%d_%d", os.Getpid(), i))
		if err != nil {
			t.Fatal(err)
		}
		defer drop()
		fleetDBs[i] = edgetest.Dataset{CH: &cfg}
	}
	t.Run("two edges share keys and the day", func(t *testing.T) {
		twoEdgesShareKeysAndTheDay(t, fleetDBs[0])
	})

	// The first replica of the first shard, the first address of every
	// edge, goes away: loads, reads, sign-ups, key reloads and the day's
	// usage go on through the shard's other replica.
	t.Run("a replica down", func(t *testing.T) {
		down := c.Shards[0][0]
		down.Pause()
		defer func() {
			if err := down.Resume(); err != nil {
				t.Fatal(err)
			}
		}()
		if err := many.Jobs.RunNow("views"); err != nil {
			t.Fatalf("full load with a replica down: %v", err)
		}
		l := st.Replica.OfStore(views.Edge)[7]
		p := "/api/v1/listings/edge/" + url.PathEscape(l.ID) + "/history?days=12"
		want := get(t, "GET", one.Base+p)
		waitFor(t, func() bool { // the pooled connections to the replica fail once each
			b := get(t, "GET", many.Base+p)
			return b.status == 200 && bytes.Equal(b.body, want.body)
		})
		key, _ := signUpWithKey(t, many, "down@example.com")
		if a := call(t, "GET", many.Base+"/api/v1/tags", bearer(key), ""); a.status != 200 {
			t.Fatalf("a key made with a replica down: %d %s", a.status, a.body)
		}
		// Two new edges: a key made on one is reloaded by the other, and
		// their usage adds up, all with the replica down.
		twoEdgesShareKeysAndTheDay(t, fleetDBs[1])
	})

	// The second shard, one server, goes away: what the edge answers
	// from memory goes on; a read of ClickHouse, which a Distributed
	// table sends to every shard, answers 503 with Retry-After; a full
	// load fails and the last state keeps serving; the calls counted
	// meanwhile are written once the shard is back, and every answer is
	// whole again.
	t.Run("a whole shard down", func(t *testing.T) {
		key, _ := signUpWithKey(t, many, "shard@example.com")
		// The calls made while the shard is away use a key of their own,
		// so that its day holds exactly them.
		countedKey, id := signUpWithKey(t, many, "shard-counted@example.com")
		cconn, err := analytics.Open(ctx, ccfg)
		if err != nil {
			t.Fatal(err)
		}
		defer cconn.Close()
		stored := func() (uint64, error) {
			u, err := analytics.LoadUsage(ctx, cconn, time.Now())
			return u["key:"+id], err
		}
		l := st.Replica.OfStore(views.Apple)[5]
		history := "/api/v1/listings/apple/" + url.PathEscape(l.ID) + "/history?days=12"
		memory := []string{"/api/v1/charts/chrome?chart=trending", "/api/v1/listings/apple/" + url.PathEscape(l.ID), "/api/summary",
			"/stores/apple", "/charts/chrome?chart=top"}
		before := many.State.Load()
		down := c.Shards[1][0]
		down.Pause()
		resumed := false
		defer func() {
			if !resumed {
				down.Resume()
			}
		}()
		if err := many.Jobs.RunNow("views"); err == nil {
			t.Fatal("a full load with a shard down succeeded")
		}
		if many.State.Load() != before {
			t.Fatal("a failed load replaced the published state")
		}
		for _, p := range memory {
			if a, b := get(t, "GET", one.Base+p), get(t, "GET", many.Base+p); b.status != 200 || !bytes.Equal(a.body, b.body) {
				t.Errorf("%s with a shard down: %d, want the answer from memory", p, b.status)
			}
		}
		r := call(t, "GET", many.Base+history, bearer(key), "")
		if problem(t, r, 503); r.header.Get("Retry-After") == "" {
			t.Fatal("a read refused with a shard down has no Retry-After")
		}
		// A listing's page reads its year of history: refused the same
		// way, as a page for people.
		pg := get(t, "GET", many.Base+"/listings/apple/"+url.PathEscape(l.ID))
		if pg.status != 503 || pg.header.Get("Retry-After") == "" || !strings.HasPrefix(pg.header.Get("Content-Type"), "text/html") {
			t.Fatalf("a listing's page with a shard down: %d, Retry-After %q, %s", pg.status, pg.header.Get("Retry-After"), pg.header.Get("Content-Type"))
		}
		// A key not used on this edge yet has nothing reserved, and the
		// log cannot be read back with a shard down: its calls are refused
		// for a moment (503, Retry-After: 5, no RateLimit headers), not
		// admitted uncounted (limits' reserve.go).
		const calls = 5
		for range calls {
			if a := call(t, "GET", many.Base+"/api/v1/tags", bearer(countedKey), ""); a.status != 503 ||
				a.header.Get("Retry-After") != "5" || a.header.Get("RateLimit-Limit") != "" {
				t.Fatalf("a key's first call with a shard down: %d %s, want 503 Retry-After: 5", a.status, a.body)
			}
		}
		if err := down.Resume(); err != nil {
			t.Fatal(err)
		}
		resumed = true
		want := get(t, "GET", one.Base+history)
		waitFor(t, func() bool {
			b := call(t, "GET", many.Base+history, bearer(key), "")
			return b.status == 200 && bytes.Equal(b.body, want.body)
		})
		if err := many.Jobs.RunNow("views"); err != nil {
			t.Fatalf("a full load once the shard is back: %v", err)
		}
		for _, p := range paths {
			if a, b := get(t, "GET", one.Base+p), get(t, "GET", many.Base+p); b.status != a.status || !bytes.Equal(a.body, b.body) {
				t.Errorf("%s once the shard is back: one server %d, the cluster %d", p, a.status, b.status)
			}
		}
		// Once the shard is back the key's calls are admitted, and the
		// day's usage holds them (each was read back before it was
		// admitted), and no more than them and the calls reserved for the
		// key and not used (some of which may still be on their way to
		// the other shard, in the Distributed table's queue), through the
		// syncs after (every 100 ms here): nothing lost, nothing counted
		// twice.
		for admitted := 0; admitted < calls; {
			if a := call(t, "GET", many.Base+"/api/v1/tags", bearer(countedKey), ""); a.status == 200 {
				admitted++
			}
		}
		waitFor(t, func() bool {
			n, err := stored()
			return err == nil && n >= calls
		})
		for range 5 {
			time.Sleep(200 * time.Millisecond)
			reserved := uint64(metricOf(t, many.Base, "edge_usage_reserved_calls"))
			if n, err := stored(); err != nil || n < calls || n > calls+reserved {
				t.Fatalf("the day's usage of the key: %d (%v), want the %d calls admitted and at most the %d reserved and not used", n, err, calls, reserved)
			}
		}
	})

	// ZooKeeper goes away: reads go on; a write to a replicated table
	// (a new key) is refused with a 503 that says to retry, and works
	// again once ZooKeeper is back.
	t.Run("zookeeper down", func(t *testing.T) {
		c.ZooKeeper.Pause()
		resumed := false
		defer func() {
			if !resumed {
				c.ZooKeeper.Resume()
			}
		}()
		if err := many.Jobs.RunNow("views"); err != nil {
			t.Fatalf("full load without ZooKeeper: %v", err)
		}
		l := st.Replica.OfStore(views.Firefox)[3]
		p := "/api/v1/listings/firefox/" + url.PathEscape(l.ID) + "/growth?from=2026-02-21"
		if a, b := get(t, "GET", one.Base+p), get(t, "GET", many.Base+p); b.status != 200 || !bytes.Equal(a.body, b.body) {
			t.Fatalf("a read without ZooKeeper: %d %s", b.status, b.body)
		}
		cred := basic("many@example.com", "long enough password")
		refused := call(t, "POST", many.Base+"/account/keys", cred, "")
		if problem(t, refused, 503); refused.header.Get("Retry-After") == "" {
			t.Fatal("a refused write without Retry-After")
		}
		if err := c.ZooKeeper.Resume(); err != nil {
			t.Fatal(err)
		}
		resumed = true
		var last answer
		defer func() {
			if t.Failed() {
				t.Logf("the last try: %d %s", last.status, last.body)
			}
		}()
		// The servers reconnect to ZooKeeper and leave read-only mode
		// within a check period (1 s here) of a new session: seconds, more
		// on a busy machine.
		for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(200 * time.Millisecond) {
			if last = call(t, "POST", many.Base+"/account/keys", cred, ""); last.status == 201 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("writes not back within 90 s of ZooKeeper")
			}
		}
	})

	// A replica added to the running cluster, a second one of the second
	// shard: once every server names it, edge migrate gives it the
	// tables it lacks, it fetches its shard's rows from the other replica
	// through ZooKeeper, and an edge that reads through it alone answers
	// as the edge over one server does.
	t.Run("a replica added", func(t *testing.T) {
		added, err := c.AddReplica(1)
		if err != nil {
			t.Fatal(err)
		}
		count := func(s *chtest.Server, sql string, args ...any) uint64 {
			conn, err := analytics.Open(ctx, s.Config("default"))
			if err != nil {
				return 0
			}
			defer conn.Close()
			var n uint64
			if err := conn.QueryRow(ctx, sql, args...).Scan(&n); err != nil {
				return 0
			}
			return n
		}
		for _, s := range c.Servers() { // each reads its configuration again within seconds
			waitWithin(t, time.Minute, func() bool {
				return count(s, "SELECT count() FROM system.clusters WHERE cluster = ?", chtest.ClusterName) == uint64(len(c.Servers()))
			})
		}
		if _, err := analytics.Migrate(ctx, ccfg, slog.New(slog.DiscardHandler)); err != nil {
			t.Fatalf("migrate with a replica added: %v", err)
		}
		peer := c.Shards[1][0]
		for _, table := range []string{"listings_local", "snapshots_local", "reviews_local", "accounts_local", "api_keys_local", "editions_local"} {
			q := "SELECT count() FROM " + ccfg.Database + "." + table
			want := count(peer, q)
			if table == "listings_local" && want == 0 {
				t.Fatalf("the shard's other replica holds no listings")
			}
			waitWithin(t, time.Minute, func() bool { return count(added, q) == want })
		}
		through := ccfg
		through.Addr = added.Addr
		h := start(t, edgetest.Dataset{CH: &through})
		for _, job := range []string{"views", "editions"} {
			if err := h.Jobs.RunNow(job); err != nil {
				t.Fatal(job, err)
			}
		}
		for _, p := range paths {
			if p == "/api/v1/exports" {
				continue // each edge lists the files it built
			}
			if a, b := get(t, "GET", one.Base+p), get(t, "GET", h.Base+p); b.status != a.status || !bytes.Equal(a.body, b.body) {
				t.Errorf("%s through the new replica: %d (%d bytes), one server %d (%d bytes)", p, b.status, len(b.body), a.status, len(a.body))
			}
		}
	})
}

// waitWithin waits until cond holds, up to d: a bound on waiting for
// ClickHouse's own pace (it rereads its configuration, a replica fetches
// its parts), which in make test's busy passes can take longer than
// waitFor's 15 s: not a bound on speed.
func waitWithin(t *testing.T, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v", d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
