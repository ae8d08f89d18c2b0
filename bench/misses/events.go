package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
)

// The listings and events the events mix asks about, read from the edge
// before the run (eventsPrepare).
var (
	eventRefs    []string // store/id of listings with changes
	eventCursors []string // eventIds spread over the window
)

// eventsPrepare pages the edge's event feed back (pages of 1,000, at most
// 200 pages) to collect listings with changes and event ids to start from.
func eventsPrepare(base string) error {
	seen := map[string]bool{}
	cursor := ""
	for page := 0; page < 200; page++ {
		u := base + "/api/v1/events?limit=1000"
		if cursor != "" {
			u += "&cursor=" + url.QueryEscape(cursor)
		}
		resp, err := http.Get(u)
		if err != nil {
			return err
		}
		var p struct {
			Events []struct {
				EventID, Store, ID string
			}
			NextCursor *string
		}
		err = json.NewDecoder(resp.Body).Decode(&p)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			return fmt.Errorf("%s: %d %v", u, resp.StatusCode, err)
		}
		for i, e := range p.Events {
			if k := e.Store + "/" + url.PathEscape(e.ID); !seen[k] {
				seen[k] = true
				eventRefs = append(eventRefs, k)
			}
			if i%50 == 0 {
				eventCursors = append(eventCursors, e.EventID)
			}
		}
		if p.NextCursor == nil {
			break
		}
		cursor = *p.NextCursor
	}
	if len(eventRefs) == 0 {
		return fmt.Errorf("no event in the feed")
	}
	return nil
}

var eventKinds = []string{"version", "permissions", "hostAccess", "manifestVersion", "accessLevel", "developer", "name", "category", "featured", "delisted", "relisted"}

// eventsQuery returns a changelog page of a random listing, or a page of
// the feed with random filters from a random place, newest first or
// forward; each distinct by its limit and place.
func eventsQuery(rng *rand.Rand, n uint64) string {
	limit := 1 + int(n%100)
	if rng.IntN(2) == 0 {
		return fmt.Sprintf("/api/v1/listings/%s/changes?limit=%d", eventRefs[rng.IntN(len(eventRefs))], limit)
	}
	v := url.Values{}
	v.Set("limit", fmt.Sprint(limit))
	switch rng.IntN(4) {
	case 0:
		v.Set("store", mixStores[rng.IntN(len(mixStores))])
	case 1:
		v.Set("store", "chrome,edge")
		v.Set("kind", "permissions,hostAccess,developer")
	case 2:
		v.Set("kind", strings.Join([]string{eventKinds[rng.IntN(len(eventKinds))], eventKinds[rng.IntN(len(eventKinds))]}, ","))
	case 3:
		v.Set("permission", []string{"tabs", "cookies", "history", "webRequest", "scripting"}[rng.IntN(5)])
	}
	c := eventCursors[rng.IntN(len(eventCursors))]
	if rng.IntN(2) == 0 {
		v.Set("since", c)
	} else {
		v.Set("cursor", c)
	}
	return "/api/v1/events?" + v.Encode()
}
