// Command lakesynth writes a readings file of the lake (analytics/lake's
// writer and schema) from synthetic histories shaped like a large
// store's: package names with shared prefixes, sorted, each listing's
// days consecutive, values that drift. It lets bench/lake.sh measure
// what a reader of one listing fetches of a file the size of bench_5m's
// largest (about 300 M rows) without seeding 5M listings first; the
// file's rows are not the demo data's.
package main

import (
	"bufio"
	"encoding/binary"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/analytics/lake"
	"github.com/edge-stats/edge/views"
)

var (
	developers = []string{"acme", "cobalt", "lumen", "nimbus", "orbit", "pixel", "quanta", "rapid", "solace", "tandem", "umbra", "vertex", "willow", "xenon", "yonder", "zephyr"}
	products   = []string{"focusnotes", "focuspasswordvault", "focuspdftools", "focusphotoeditor", "budget", "calendar", "chat", "fitness", "music", "news", "scanner", "weather", "vpn", "launcher", "keyboard", "recipes"}
)

// chunkRead prints what a reader that uses row groups' statistics but
// no page index reads of file path for listing id: the footer, and the
// column chunks of columns in the row groups whose id statistics hold id.
func chunkRead(path, id string, columns ...string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	pf, err := parquet.OpenFile(f, st.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return err
	}
	var tail [8]byte
	if _, err := f.ReadAt(tail[:], st.Size()-8); err != nil {
		return err
	}
	footer := int64(binary.LittleEndian.Uint32(tail[:4])) + 8
	read, groups := footer, 0
	for _, g := range pf.Metadata().RowGroups {
		var idStats format.Statistics
		for _, c := range g.Columns {
			if c.MetaData.PathInSchema[0] == "id" {
				idStats = c.MetaData.Statistics
			}
		}
		if id < string(idStats.MinValue) || id > string(idStats.MaxValue) {
			continue
		}
		groups++
		for _, c := range g.Columns {
			if slices.Contains(columns, c.MetaData.PathInSchema[0]) {
				read += c.MetaData.TotalCompressedSize
			}
		}
	}
	fmt.Printf("footer %d bytes, %d row groups of %d, read %d bytes (%v)\n", footer, groups, len(pf.Metadata().RowGroups), read, columns)
	return nil
}

func main() {
	listings := flag.Int("listings", 840_000, "listings in the file")
	days := flag.Int("days", 365, "days of history a listing has at most")
	out := flag.String("out", "readings.parquet", "file to write")
	ids := flag.String("ids", "", "also write two ids of the file, on a line, to this file")
	group := flag.Int64("group", lake.ReadingsPerGroup, "rows a row group holds at most")
	page := flag.Int("page", lake.ReadingsPageBytes, "bytes a page is cut at")
	chunks := flag.String("chunks", "", "instead, print what a reader without the page index (DuckDB) reads of file -out for this id")
	flag.Parse()
	if *chunks != "" {
		if err := chunkRead(*out, *chunks, "id", "day", "size", "rating", "rank"); err != nil {
			log.Fatal(err)
		}
		return
	}
	r := rand.New(rand.NewPCG(1, 2))
	names := make([]string, *listings)
	for i := range names {
		names[i] = "com." + developers[r.IntN(len(developers))] + "." + products[r.IntN(len(products))] + strconv.FormatInt(int64(i), 36)
	}
	slices.Sort(names)
	if *ids != "" {
		if err := os.WriteFile(*ids, []byte(fmt.Sprintln(names[len(names)/3], names[len(names)/2])), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	f, err := os.Create(*out)
	if err != nil {
		log.Fatal(err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	w := lake.NewPagedWriter[lake.Reading](bw, lake.ReadingsSchema, *group, *page, "store", "id", "day")
	last := views.DayOf(time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC))
	rows := 0
	start := time.Now()
	for i, id := range names {
		n := *days
		if i%3 == 0 {
			n = 1 + r.IntN(*days) // came later
		}
		usage, rating, count := uint64(r.IntN(1_000_000)), 3+2*r.Float64(), uint64(r.IntN(50_000))
		for d := range n {
			day := last - views.Day(n-1-d)
			usage += uint64(r.IntN(200))
			count += uint64(r.IntN(20))
			if r.IntN(10) == 0 {
				rating = min(5, max(1, rating+float64(r.IntN(3)-1)/10))
			}
			u, c, rt := usage, count, float64(int(rating*10))/10
			rd := analytics.DayReading{ID: id, Day: day, At: day.Time().Add(time.Duration(r.IntN(86400)) * time.Second),
				Usage: &u, RatingCount: &c, Rating: &rt, Rank: uint32(1 + i), CategoryRank: uint32(1 + i%500)}
			if err := w.Add(lake.ReadingOf(views.GooglePlay, &rd)); err != nil {
				log.Fatal(err)
			}
			rows++
		}
	}
	if _, err := w.Close(); err != nil {
		log.Fatal(err)
	}
	if err := bw.Flush(); err != nil {
		log.Fatal(err)
	}
	st, _ := f.Stat()
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
	log.Printf("%d rows of %d listings, %d bytes, in %s", rows, len(names), st.Size(), time.Since(start).Round(time.Second))
}
