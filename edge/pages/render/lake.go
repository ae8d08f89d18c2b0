package render

import (
	"net/url"
	"strings"
)

// Lake is what a store's or a listing's page shows analysts of the lake
// (docs/api-v1.md, The lake): the store's Parquet tables whole at their
// stable addresses, and the one DuckDB query that reads what the page
// shows from them.
type Lake struct {
	Files []LakeFile
	Query string
	Base  string // the service's public address, the DuckDB secret's scope
}

// LakeFile is one table's file.
type LakeFile struct {
	Table, URL string
}

// lakeTables are the tables a page links, in order.
var lakeTables = []string{"listings", "readings", "changes", "reviews"}

// LakeOf returns the lake of store (base is the service's public
// address, EDGE_PUBLIC_URL): with id, the query reads that listing's
// daily history; else the store's largest live listings, from the
// listings table (the readings hold the days a listing was read, so a
// count of them by day is not the store's live listings).
func LakeOf(base, store, id string) Lake {
	l := Lake{Base: base + "/"}
	for _, t := range lakeTables {
		l.Files = append(l.Files, LakeFile{Table: t, URL: "/api/v1/exports/latest/parquet/" + t + "/store=" + url.PathEscape(store) + "/part-0.parquet"})
	}
	readings := "'" + base + l.Files[1].URL + "'"
	if id == "" {
		l.Query = "SELECT id, name, developer, size, rating FROM read_parquet('" + base + l.Files[0].URL +
			"') WHERE delisted_at IS NULL ORDER BY size DESC NULLS LAST LIMIT 20;"
	} else {
		l.Query = "SELECT day, size, rating, rating_count, rank, category_rank FROM read_parquet(" + readings + ") WHERE id = '" +
			strings.ReplaceAll(id, "'", "''") + "' ORDER BY day;"
	}
	return l
}
