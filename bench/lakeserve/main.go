// Command lakeserve serves a directory over HTTP with the standard
// library's file server (byte ranges, 206, 416), on loopback, and logs
// the bytes each request was sent: what bench/lake.sh points hyparquet at
// to count what a reader of one listing fetches of a large lake file,
// without starting an edge over the whole dataset. The edge's own
// answers to the same ranges are held to the same bytes by TestLake.
package main

import (
	"flag"
	"log"
	"net/http"
	"sync/atomic"
)

type counting struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (c counting) Write(b []byte) (int, error) {
	n, err := c.ResponseWriter.Write(b)
	c.n.Add(int64(n))
	return n, err
}

func main() {
	dir := flag.String("dir", ".", "directory to serve")
	addr := flag.String("listen", "127.0.0.1:18490", "address (loopback)")
	flag.Parse()
	files := http.FileServer(http.Dir(*dir))
	var total atomic.Int64
	http.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n atomic.Int64
		files.ServeHTTP(counting{w, &n}, r)
		log.Printf("%s %s range=%q sent=%d total=%d", r.Method, r.URL.Path, r.Header.Get("Range"), n.Load(), total.Add(n.Load()))
	}))
	log.Fatal(http.ListenAndServe(*addr, nil))
}
