package edge_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"testing"

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
				"/listings/"+s.String()+"/"+url.PathEscape(ls[i].ID))
		}
	}
	chrome, firefox := firstLive(t, one, views.Chrome), firstLive(t, one, views.Firefox)
	paths = append(paths, "/api/summary", "/api/extensions?limit=50", "/api/v1/week", "/api/v1/weeks", "/api/v1/listings?limit=100",
		"/api/v1/compare?listings="+url.QueryEscape("chrome:"+chrome.ID+",firefox:"+firefox.ID),
		"/api/v1/reviews/search?q=the&stars=all", "/api/v1/exports", "/api/v1/categories/chrome", "/api/v1/tags")
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
}
