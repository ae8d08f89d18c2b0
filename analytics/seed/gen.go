// Package seed generates a realistic synthetic dataset for the upstream
// tables (listings, snapshots, reviews) and writes it to ClickHouse (or
// hands it over in memory, for tests: Generate). The
// dataset is a deterministic function of Options: listing i is generated
// from its own random stream seeded by (Seed, i), so generation runs in
// parallel and the same options always give the same rows.
package seed

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/views"
)

// Options set the dataset's size and shape.
type Options struct {
	Seed              uint64    // random seed; the same seed gives the same rows
	Listings          int       // number of listings across all stores
	Days              int       // days of history before End
	ReviewsPerListing int       // average stored reviews per listing (not on chrome)
	End               time.Time // time of the newest crawl
	Shares            Shares    // how the listings are spread over the stores
}

// Shares names how a dataset's listings are spread over the stores.
type Shares string

// The spreads of listings over the stores.
const (
	// SharesTest gives 40% chrome, 10% edge, 10% firefox, 18% apple and
	// 22% googleplay: every store well populated at a few hundred
	// listings, as tests need.
	SharesTest Shares = ""
	// SharesReal gives each store its share of the five stores' real size
	// (realListings): about 4.4% chrome, 0.7% edge, 0.9% firefox, 44%
	// apple and 49% googleplay.
	SharesReal Shares = "real"
)

// realListings are the stores' sizes, rounded: about two million apps
// each in the App Store and Google Play, and
// for the extension stores the orders of magnitude commonly reported for
// 2025 — about 190,000 items in the Chrome Web Store, 40,000 on Firefox
// Add-ons, 30,000 on Edge Add-ons. They set shares, not counts; change
// them when better counts are at hand.
var realListings = [views.NumStores]float64{190_000, 30_000, 40_000, 1_900_000, 2_100_000}

// cumulative returns the cumulative shares of sizes.
func cumulative(sizes [views.NumStores]float64) [views.NumStores]float64 {
	var total, run float64
	for _, n := range sizes {
		total += n
	}
	var out [views.NumStores]float64
	for i, n := range sizes {
		run += n
		out[i] = run / total
	}
	out[len(out)-1] = 1
	return out
}

// DefaultOptions is the demo dataset of `make run`: 20,000 listings with
// 400 days of history ending now, spread over the stores as they really
// are.
func DefaultOptions() Options {
	return Options{Seed: 1, Listings: 20000, Days: 400, ReviewsPerListing: 5,
		End: time.Now().UTC().Truncate(time.Hour), Shares: SharesReal}
}

// Validate reports what is wrong with o.
func (o Options) Validate() error {
	switch {
	case o.Listings < 1:
		return fmt.Errorf("listings must be at least 1, got %d", o.Listings)
	case o.Days < 1 || o.Days > 3650:
		return fmt.Errorf("days must be 1 to 3650, got %d", o.Days)
	case o.ReviewsPerListing < 0 || o.ReviewsPerListing > 1000:
		return fmt.Errorf("reviews per listing must be 0 to 1000, got %d", o.ReviewsPerListing)
	case o.End.IsZero():
		return fmt.Errorf("end time is not set")
	case o.Shares != SharesTest && o.Shares != SharesReal:
		return fmt.Errorf("shares must be real or test, got %q", o.Shares)
	}
	return nil
}

// Rows are the rows generated for one or more listings.
type Rows struct {
	Listings  []analytics.ListingRow
	Snapshots []analytics.SnapshotRow
	Reviews   []analytics.ReviewRow
}

// Len returns the total number of rows.
func (r *Rows) Len() int { return len(r.Listings) + len(r.Snapshots) + len(r.Reviews) }

func (r *Rows) reset() {
	clear(r.Listings)
	clear(r.Snapshots)
	clear(r.Reviews)
	r.Listings, r.Snapshots, r.Reviews = r.Listings[:0], r.Snapshots[:0], r.Reviews[:0]
}

// Generator produces listings of one dataset. A Generator is not safe for
// concurrent use; make one per goroutine (they are cheap).
type Generator struct {
	o      Options
	start  time.Time // window start: End - Days
	endDay views.Day
	u64    arena[uint64]
	f64    arena[float64]
	u32    arena[uint32]
}

// NewGenerator returns a generator for o, which must be valid.
func NewGenerator(o Options) *Generator {
	// ClickHouse DateTime keeps whole seconds: so does every generated time.
	o.End = o.End.UTC().Truncate(time.Second)
	return &Generator{
		o:      o,
		start:  o.End.Add(-time.Duration(o.Days) * 24 * time.Hour),
		endDay: views.DayOf(o.End),
	}
}

// storeShares are the stores' shares of listings under SharesTest, and
// realShares under SharesReal, cumulative.
var (
	storeShares = [views.NumStores]float64{0.40, 0.50, 0.60, 0.78, 1.0}
	realShares  = cumulative(realListings)
)

// trend is how a listing's size moves over the window.
type trend uint8

const (
	trendFlat trend = iota
	trendGrowing
	trendDeclining
	trendViral
)

// plan is everything decided about one listing before its rows are made.
type plan struct {
	i         int
	store     views.Store
	id        string
	size      float64 // size at the end of the window (or at delisting)
	trend     trend
	k         float64   // trend strength
	spike     float64   // viral: window fraction where the spike starts
	startAt   time.Time // first crawl
	delisted  time.Time // zero while live
	pending   bool      // known but never crawled
	rateRatio float64   // ratings per user
	mu        float64   // base average rating
	midnight  bool      // crawls on the stroke of midnight UTC
}

// kindOf draws what a listing of store s is, as the first draw after its
// plan.
func kindOf(r *rand.Rand, s views.Store) views.Kind {
	switch s {
	case views.Apple, views.GooglePlay:
		return views.KindApp
	}
	switch u := r.Float64(); {
	case u < 0.005:
		return views.KindUnknown
	case u < 0.10:
		return views.KindTheme
	default:
		return views.KindExtension
	}
}

// rng returns listing i's random source: the same for every generator of
// the dataset.
func (g *Generator) rng(i int) *rand.Rand {
	return rand.New(rand.NewPCG(g.o.Seed, uint64(i)*0x9E3779B97F4A7C15+1))
}

// twinShare is the share of the edge and firefox extensions that are a
// chrome extension published again (a twin), with small differences in
// name, developer and description.
const twinShare = 0.25

// wantsTwin says whether listing i, if an edge or firefox extension, is a
// twin (from a source of its own, so that the rest of the dataset does not
// change with it).
func (g *Generator) wantsTwin(i int) bool {
	return rand.New(rand.NewPCG(g.o.Seed^0x7477696e73, uint64(i))).Float64() < twinShare
}

// twinOf returns the chrome extension that listing i (an extension of
// store s) is the twin of: the nearest one before it, unless a listing of
// store s between them wants it (one twin a store).
func (g *Generator) twinOf(i int, s views.Store) (int, bool) {
	if (s != views.Edge && s != views.Firefox) || !g.wantsTwin(i) {
		return 0, false
	}
	for j := i - 1; j >= max(0, i-60); j-- {
		rj := g.rng(j)
		pj := g.plan(rj, j)
		switch {
		case pj.store == s && g.wantsTwin(j):
			return 0, false
		case pj.store == views.Chrome && !pj.pending && kindOf(rj, pj.store) == views.KindExtension:
			return j, true
		}
	}
	return 0, false
}

// Twin is a pair of listings of the dataset that are the same extension.
type Twin struct{ A, B analytics.ListingKey }

// Twins returns the dataset's twins: the truth that linking across stores
// is checked against.
func Twins(o Options) []Twin {
	g := NewGenerator(o)
	var out []Twin
	for i := range o.Listings {
		r := g.rng(i)
		p := g.plan(r, i)
		if p.pending {
			continue
		}
		meta := g.listingRow(r, &p)
		if meta.Kind != views.KindExtension {
			continue
		}
		if j, ok := g.twinOf(i, p.store); ok {
			rj := g.rng(j)
			pj := g.plan(rj, j)
			out = append(out, Twin{analytics.ListingKey{Store: views.Chrome, ID: pj.id}, analytics.ListingKey{Store: p.store, ID: meta.ID}})
		}
	}
	return out
}

// twin makes l the twin of chrome listing j: its name, developer and
// description, each with a small difference or none.
func (g *Generator) twin(l *analytics.ListingRow, j int) {
	rj := g.rng(j)
	pj := g.plan(rj, j)
	src := g.listingRow(rj, &pj)
	r := rand.New(rand.NewPCG(g.o.Seed^0x646966, uint64(l.FirstSeen.Unix())^uint64(len(src.Name))))
	store := "Firefox"
	if l.Store == views.Edge {
		store = "Edge"
	}
	name := src.Name
	switch r.IntN(4) {
	case 1:
		name += " for " + store
	case 2:
		name = strings.ToLower(name)
	case 3:
		name += " - Browser Extension"
	}
	dev := src.Developer
	switch r.IntN(3) {
	case 1:
		if !strings.HasSuffix(dev, "Inc.") {
			dev += " Inc."
		}
	case 2:
		dev = strings.ToUpper(dev)
	}
	desc := name + strings.TrimPrefix(src.Description, src.Name)
	switch r.IntN(3) {
	case 1:
		desc += " Now available for " + store + "."
	case 2:
		if k := strings.LastIndex(desc, ". "); k > 0 {
			desc = desc[:k+1]
		}
	}
	l.Name, l.Developer, l.Description = name, dev, desc
}

// Append generates listing i and appends its rows to dst.
func (g *Generator) Append(dst *Rows, i int) {
	r := g.rng(i)
	p := g.plan(r, i)
	meta := g.listingRow(r, &p)
	if !p.pending && meta.Kind == views.KindExtension {
		if j, ok := g.twinOf(i, p.store); ok {
			g.twin(&meta, j)
		}
	}
	if p.pending {
		dst.Listings = append(dst.Listings, meta)
		return
	}
	snapStart := len(dst.Snapshots)
	g.snapshots(dst, r, &p)
	if n := len(dst.Snapshots); n > snapStart {
		meta.CrawledAt = dst.Snapshots[n-1].CrawledAt // metadata read with the newest crawl
	}
	if !p.delisted.IsZero() {
		meta.CrawledAt = p.delisted
	}
	// The crawler writes a metadata version when it first reads a listing
	// and a new one when it changes; the newest crawled_at wins when read.
	dst.Listings = g.history(dst.Listings, r, &p, &meta)
	dst.Listings = append(dst.Listings, meta)
	if p.store.CollectsReviews() && g.o.ReviewsPerListing > 0 {
		g.reviews(dst, r, &p)
	}
}

func (g *Generator) plan(r *rand.Rand, i int) plan {
	p := plan{i: i}
	u := r.Float64()
	shares := &storeShares
	if g.o.Shares == SharesReal {
		shares = &realShares
	}
	for s, share := range shares {
		if u < share {
			p.store = views.Store(s)
			break
		}
	}
	p.id = makeID(r, p.store, i)
	// Power law: most listings are small, a few have tens of millions.
	p.size = math.Min(3/math.Pow(1-r.Float64(), 1/0.75), 60e6)
	if p.store == views.Apple {
		p.size = math.Max(p.size/40, 1) // apple's size is its rating count
	}
	switch t := r.Float64(); {
	case t < 0.40:
		p.trend = trendFlat
	case t < 0.75:
		p.trend = trendGrowing
	case t < 0.90:
		p.trend = trendDeclining
	default:
		p.trend = trendViral
	}
	p.k = 0.2 + 1.8*r.Float64()
	p.spike = 0.2 + 0.7*r.Float64()
	window := g.o.End.Sub(g.start)
	p.startAt = g.start
	if r.Float64() < 0.12 { // appears mid-window
		p.startAt = g.start.Add(time.Duration(r.Float64() * float64(window))).Truncate(time.Second)
	}
	if r.Float64() < 0.05 { // leaves its store mid-window
		rest := g.o.End.Sub(p.startAt)
		p.delisted = p.startAt.Add(time.Duration((0.1 + 0.85*r.Float64()) * float64(rest))).Truncate(time.Second)
	}
	p.pending = r.Float64() < 0.01
	p.rateRatio = math.Pow(10, -3+1.5*r.Float64())
	p.mu = 2.2 + 2.7*math.Sqrt(r.Float64())
	p.midnight = i%97 == 0
	return p
}

// makeID returns an id of the store's shape, unique for i.
func makeID(r *rand.Rand, s views.Store, i int) string {
	switch s {
	case views.Chrome, views.Edge:
		// 32 letters a-p, as the stores derive them from a key hash. The
		// index fills the first letters so ids never collide.
		var b [32]byte
		v := uint64(i)
		for j := 0; j < 8; j++ {
			b[j] = 'a' + byte(v&15)
			v >>= 4
		}
		for j := 8; j < 32; j++ {
			b[j] = 'a' + byte(r.IntN(16))
		}
		return string(b[:])
	case views.Firefox:
		return "addon-" + strconv.FormatInt(int64(i), 36) // renamed after its name once known
	case views.Apple:
		return strconv.FormatInt(int64(300_000_000+i*37+r.IntN(37)), 10)
	default:
		return "com.app.app" + strconv.FormatInt(int64(i), 36) // renamed after its developer once known
	}
}

func (g *Generator) listingRow(r *rand.Rand, p *plan) analytics.ListingRow {
	l := analytics.ListingRow{Store: p.store, ID: p.id, FirstSeen: p.startAt, CrawledAt: p.startAt}
	l.Kind = kindOf(r, p.store)
	if p.startAt.Equal(g.start) {
		// Found before the window: the crawler knew it earlier.
		l.FirstSeen = g.start.Add(-time.Duration(r.IntN(700*24)) * time.Hour)
	}
	l.FirstSeen = l.FirstSeen.Truncate(time.Second)
	if p.pending {
		return l // known, never read: only the id and when it was found
	}
	if r.Float64() < 0.02 {
		l.Name = oddNames[r.IntN(len(oddNames))]
	} else {
		l.Name = nameAdjectives[r.IntN(len(nameAdjectives))] + " " + nameNouns[r.IntN(len(nameNouns))]
		if r.Float64() < 0.15 {
			l.Name += " Pro"
		}
	}
	dev := int(math.Pow(r.Float64(), 2) * float64(max(p.i/3, 50))) // a few prolific developers
	l.Developer = devFirst[dev%len(devFirst)] + " " + devSecond[(dev/len(devFirst))%len(devSecond)]
	if n := dev / (len(devFirst) * len(devSecond)); n > 0 {
		l.Developer += " " + strconv.Itoa(n)
	}
	// Firefox slugs and Play package names come from the name and developer;
	// the index keeps them unique.
	switch p.store {
	case views.Firefox:
		if base := slugify(l.Name); base != "" {
			p.id = base + "-" + strconv.FormatInt(int64(p.i), 36)
		}
	case views.GooglePlay:
		name := strings.ReplaceAll(slugify(l.Name), "-", "")
		if name == "" {
			name = "app"
		}
		p.id = "com." + strings.ToLower(devFirst[dev%len(devFirst)]) + "." + name + strconv.FormatInt(int64(p.i), 36)
	}
	l.ID = p.id
	cats := categories[p.store]
	l.Category = cats[int(math.Pow(r.Float64(), 1.7)*float64(len(cats)))]
	l.Description = fmt.Sprintf("%s helps you %s %s. %s", l.Name, descVerbs[r.IntN(len(descVerbs))],
		descObjects[r.IntN(len(descObjects))], descExtras[r.IntN(len(descExtras))])
	for n := r.IntN(4); n > 0; n-- {
		l.Description += " " + descExtras[r.IntN(len(descExtras))]
	}
	l.Icon = "https://icons.example.org/" + p.store.String() + "/" + p.id + ".png"
	l.Version = makeVersion(r, p.store)
	switch p.store {
	case views.Chrome, views.Edge, views.Apple:
		s := slugify(l.Name)
		if s == "" {
			s = "listing"
		}
		l.Slug = &s
	case views.Firefox:
		s := p.id
		l.Slug = &s
	}
	end := views.DayOf(g.o.End)
	if r.Float64() > 0.01 { // a few listings publish no update date
		ago := int(math.Pow(r.Float64(), 2.5) * 365 * 10)
		d := (end - views.Day(ago)).Time()
		l.StoreUpdated = &d
	}
	if p.store == views.Firefox || p.store == views.Apple || p.store == views.GooglePlay {
		d := l.FirstSeen.Truncate(24*time.Hour).AddDate(0, 0, -r.IntN(2000))
		if l.StoreUpdated != nil && d.After(*l.StoreUpdated) {
			d = *l.StoreUpdated
		}
		l.StoreCreated = &d
	}
	if !p.delisted.IsZero() {
		d := p.delisted
		l.DelistedAt = &d
	}
	l.Featured = (p.store == views.Chrome || p.store == views.Edge || p.store == views.Firefox) &&
		p.delisted.IsZero() && r.Float64() < 0.01+0.1*math.Min(p.size/1e6, 1)
	for n := 1 + r.IntN(3); n > 0 && r.Float64() < 0.8; n-- {
		t := topics[r.IntN(len(topics))]
		if !contains(l.Topics, t) {
			l.Topics = append(l.Topics, t)
		}
	}
	if p.store.ReadsManifests() {
		g.manifest(r, &l)
	}
	return l
}

// manifest fills manifest version, permissions, host access and the access
// level the crawler derives from them.
func (g *Generator) manifest(r *rand.Rand, l *analytics.ListingRow) {
	l.ManifestVersion = 3
	if r.Float64() < 0.3 {
		l.ManifestVersion = 2
	}
	if l.Kind == views.KindTheme {
		l.AccessLevel = 1
		return
	}
	for _, pw := range permissionWeights {
		if r.Float64() < pw.share {
			l.Permissions = append(l.Permissions, pw.name)
		}
	}
	all := false
	switch u := r.Float64(); {
	case u < 0.25:
		l.HostAccess = append([]string(nil), allHosts[r.IntN(len(allHosts))]...)
		all = true
	case u < 0.55:
		for n := 1 + r.IntN(3); n > 0; n-- {
			h := someHosts[r.IntN(len(someHosts))]
			if !contains(l.HostAccess, h) {
				l.HostAccess = append(l.HostAccess, h)
			}
		}
	}
	if all && l.ManifestVersion == 2 && r.Float64() < 0.5 {
		l.Permissions = append(l.Permissions, "<all_urls>") // MV2 lists hosts among permissions
	}
	nSensitive := 0
	for _, p := range l.Permissions {
		if sensitive[p] {
			nSensitive++
		}
	}
	switch {
	case all && nSensitive > 0:
		l.AccessLevel = 4
	case all || nSensitive >= 2:
		l.AccessLevel = 3
	case len(l.HostAccess) > 0 || nSensitive == 1 || contains(l.Permissions, "tabs"):
		l.AccessLevel = 2
	default:
		l.AccessLevel = 1
	}
}

// valueAt returns the listing's size at window fraction t (0 start, 1 end).
func (p *plan) valueAt(t float64, noise float64) float64 {
	var v float64
	switch p.trend {
	case trendGrowing:
		v = p.size * math.Exp(-p.k*(1-t))
	case trendDeclining:
		v = p.size * math.Exp(p.k*(1-t)*0.5)
	case trendViral:
		if t < p.spike {
			v = p.size * 0.05 * (1 + t)
		} else {
			v = p.size * (0.05 + 0.95*(1-math.Exp(-(t-p.spike)*40)))
		}
	default:
		v = p.size * (1 + 0.03*math.Sin(t*9+float64(p.i)))
	}
	return math.Max(0, v*(1+noise))
}

// crawlsPerDay follows size: big listings are read several times a day,
// the smallest every third day.
func crawlsPerDay(size float64) int {
	switch {
	case size >= 1e6:
		return 4
	case size >= 1e4:
		return 2
	case size >= 100:
		return 1
	}
	return 0
}

func (g *Generator) snapshots(dst *Rows, r *rand.Rand, p *plan) {
	windowSec := g.o.End.Sub(g.start).Seconds()
	stop := g.o.End
	if !p.delisted.IsZero() {
		stop = p.delisted
	}
	perDay := crawlsPerDay(p.size)
	firstDay := views.DayOf(p.startAt)
	for d := firstDay; d <= g.endDay; d++ {
		if perDay == 0 && (int(d)+p.i)%3 != 0 {
			continue
		}
		if r.Float64() < 0.02 { // the crawler missed the day
			continue
		}
		n := max(perDay, 1)
		for c := 0; c < n; c++ {
			at := d.Time().Add(time.Duration(c*24/n)*time.Hour + time.Duration(r.IntN(3*3600))*time.Second)
			if p.midnight && c == 0 {
				at = d.Time() // on the stroke of midnight UTC
			}
			if at.Before(p.startAt) || at.After(stop) {
				continue
			}
			t := at.Sub(g.start).Seconds() / windowSec
			g.appendReading(dst, r, p, at, t)
		}
	}
}

func (g *Generator) appendReading(dst *Rows, r *rand.Rand, p *plan, at time.Time, t float64) {
	size := p.valueAt(t, 0.01*r.NormFloat64())
	s := analytics.SnapshotRow{Store: p.store, ID: p.id, CrawledAt: at}
	var ratings float64
	if p.store == views.Apple {
		ratings = size
	} else {
		usage := uint64(size)
		if p.store == views.Chrome {
			usage = chromeRounding(usage)
		}
		s.Usage = g.u64.ptr(usage)
		if p.store == views.Firefox {
			s.WeeklyDownloads = g.u64.ptr(uint64(size * (0.02 + 0.1*math.Abs(math.Sin(float64(p.i))))))
		}
		ratings = size * p.rateRatio
	}
	rc := uint64(ratings)
	if rc == 0 {
		dst.Snapshots = append(dst.Snapshots, s)
		return
	}
	// The rating drifts slowly; the histogram is drawn around it and the
	// published average is the histogram's mean, as stores compute it.
	mu := p.mu + 0.3*math.Sin(t*6+float64(p.i)) + 0.05*r.NormFloat64()
	stars := g.u32.slice(5)
	var sum, total uint64
	var weights [5]float64
	var wsum float64
	for k := range 5 {
		dk := float64(k+1) - mu
		weights[k] = math.Exp(-dk * dk / 1.8)
		wsum += weights[k]
	}
	for k := range 5 {
		stars[k] = uint32(float64(rc) * weights[k] / wsum)
		total += uint64(stars[k])
	}
	stars[int(math.Min(math.Max(math.Round(mu), 1), 5))-1] += uint32(rc - total)
	for k := range 5 {
		sum += uint64(k+1) * uint64(stars[k])
	}
	s.RatingCount = g.u64.ptr(rc)
	s.Rating = g.f64.ptr(math.Round(float64(sum)/float64(rc)*100) / 100)
	s.Stars = stars
	dst.Snapshots = append(dst.Snapshots, s)
}

// chromeRounding mimics the store's rounding of user counts: exact below
// 1,000, three significant digits above, and "10,000,000+" at the top.
func chromeRounding(v uint64) uint64 {
	if v >= 10_000_000 {
		return 10_000_000
	}
	if v < 1000 {
		return v
	}
	p := uint64(1)
	for v/p >= 1000 {
		p *= 10
	}
	return v / p * p
}

func (g *Generator) reviews(dst *Rows, r *rand.Rand, p *plan) {
	mean := float64(g.o.ReviewsPerListing) * (0.2 + math.Log10(p.size+1)/3)
	n := int(mean * 2 * r.Float64())
	n = min(n, 300)
	stop := g.o.End
	if !p.delisted.IsZero() {
		stop = p.delisted
	}
	span := stop.Sub(p.startAt)
	if span <= 0 {
		return
	}
	for j := range n {
		posted := p.startAt.Add(time.Duration(r.Float64() * float64(span))).Truncate(time.Second)
		crawled := posted.Add(time.Duration(r.IntN(48*3600)) * time.Second)
		if crawled.After(g.o.End) {
			crawled = g.o.End
		}
		stars := uint8(math.Min(math.Max(math.Round(p.mu+1.3*r.NormFloat64()), 1), 5))
		lang := reviewLangs[0]
		if r.Float64() < 0.4 {
			lang = reviewLangs[1+r.IntN(len(reviewLangs)-1)]
		}
		pool := lang.neutral
		switch {
		case stars >= 4:
			pool = lang.positive
		case stars <= 2:
			pool = lang.critical
		}
		text := pool[r.IntN(len(pool))]
		for k := r.IntN(4); k > 0; k-- {
			text += " " + pool[r.IntN(len(pool))]
		}
		if r.Float64() < 0.03 { // a long review
			for k := 0; k < 20; k++ {
				text += " " + pool[r.IntN(len(pool))]
			}
		}
		if r.Float64() < 0.1 {
			text += " " + []string{"👍", "🙏", "🔥", "😢", "💯"}[r.IntN(5)]
		}
		dst.Reviews = append(dst.Reviews, analytics.ReviewRow{
			Store:     p.store,
			ListingID: p.id,
			ReviewID:  "r" + strconv.FormatUint(uint64(p.i), 36) + "-" + strconv.Itoa(j),
			PostedAt:  posted,
			Stars:     stars,
			Author:    authors[r.IntN(len(authors))],
			Lang:      lang.code,
			Text:      text,
			CrawledAt: crawled,
		})
	}
}

func makeVersion(r *rand.Rand, s views.Store) string {
	switch u := r.Float64(); {
	case u < 0.02:
		return []string{"v1.2", "beta-3", "vNext"}[r.IntN(3)]
	case u < 0.05 && s == views.GooglePlay:
		return "Varies with device"
	case u < 0.15:
		return fmt.Sprintf("%d.%d", r.IntN(5), 1+r.IntN(20)) // 2.10-style
	case u < 0.25 && (s == views.Chrome || s == views.Edge):
		return fmt.Sprintf("%d.%d.%d.%d", r.IntN(10), r.IntN(10), r.IntN(30), r.IntN(500))
	}
	return fmt.Sprintf("%d.%d.%d", r.IntN(12), r.IntN(20), r.IntN(30))
}

// history appends the metadata versions of a listing before meta, its
// newest, oldest first: the crawler's first read at the listing's start,
// then its updates. Updates come at a listing's own pace (extensions two
// to eight a year, apps three to twelve, more for bigger listings), each
// a new version number, and some also change what an owner changes: a few
// percent add or remove permissions or host access (now and then widening
// it to every host, with a higher access level), fewer move from manifest
// V2 to V3, and a fraction of a percent change developer (a listing sold),
// name or category; some listings are featured or unfeatured, and a few
// are delisted for a while and come back. A listing delisted for good
// (meta.DelistedAt) was live in every version before its last. The
// versions are made from meta backwards, each the one after it with that
// update undone; meta's crawl becomes its last update's (or the first
// read's), unless it is the delisting's.
func (g *Generator) history(dst []analytics.ListingRow, r *rand.Rand, p *plan, meta *analytics.ListingRow) []analytics.ListingRow {
	first := p.startAt
	if !first.Before(meta.CrawledAt) {
		clampUpdated(meta)
		return dst
	}
	end := meta.CrawledAt
	span := end.Sub(first)
	years := span.Hours() / (24 * 365)
	big := math.Min(p.size/1e5, 1)
	rate := 2 + 6*big
	if meta.Kind == views.KindApp {
		rate = 3 + 9*big
	}
	n := min(int(years*rate+r.Float64()), 24)
	at := make([]time.Time, n) // the updates' crawls, before meta's
	for i := range at {
		at[i] = first.Add(time.Duration(r.Float64() * float64(span))).Truncate(time.Second)
	}
	slices.SortFunc(at, func(a, b time.Time) int { return a.Compare(b) })
	at = slices.CompactFunc(at, func(a, b time.Time) bool { return a.Equal(b) })
	at = slices.DeleteFunc(at, func(t time.Time) bool { return !t.After(first) || !t.Before(end) })
	if meta.DelistedAt == nil {
		// The newest version is the last update's, or the first read's:
		// the crawler writes a version when something changed, not at
		// every crawl.
		meta.CrawledAt = first
		if len(at) > 0 {
			meta.CrawledAt, at = at[len(at)-1], at[:len(at)-1]
		}
		if len(at) == 0 && meta.CrawledAt.Equal(first) {
			clampUpdated(meta)
			return dst
		}
	}
	versions := make([]analytics.ListingRow, len(at)+2) // first read, updates, meta
	versions[len(versions)-1] = *meta
	cur := *meta
	cur.DelistedAt = nil // live before, whether or not meta is delisted
	if !meta.Featured && r.Float64() < 0.01 {
		cur.Featured = true // unfeatured by its last update
	}
	away := -1 // the version delisted for a while, if any
	if meta.DelistedAt == nil && len(at) >= 2 && r.Float64() < 0.01 {
		away = 1 + r.IntN(len(at)-1)
	}
	for i := len(versions) - 2; i >= 0; i-- {
		// A delisting is no new version: the version before a delisted
		// meta is meta, live.
		if i < len(versions)-2 || meta.DelistedAt == nil {
			cur = g.undoUpdate(r, p, cur)
		}
		cur.CrawledAt = first
		if i > 0 {
			cur.CrawledAt = at[i-1]
		}
		versions[i] = cur
	}
	if away > 0 {
		// Delisted for a while: the version before, gone from the store
		// at this crawl; the next version comes back.
		v := versions[away-1]
		v.CrawledAt = versions[away].CrawledAt
		d := v.CrawledAt
		v.DelistedAt = &d
		versions[away] = v
	}
	versions = g.stageSale(p.i, p, versions)
	// The store's update date of each version after the first read is
	// within two days before the crawl that saw it as a new version; the
	// first read's is its own date, no later than that crawl. A version
	// that only delists keeps the date before it.
	clampUpdated(&versions[0])
	for i := 1; i < len(versions); i++ {
		v := &versions[i]
		if v.DelistedAt != nil && (i == len(versions)-1 || i == away) {
			v.StoreUpdated = versions[i-1].StoreUpdated
			continue
		}
		if v.StoreUpdated == nil && versions[i-1].StoreUpdated == nil {
			continue // a listing that publishes no update date
		}
		// Published a day or two before the crawl that saw it (the crawler
		// writes a version only when something changed: the version before
		// may be months older), never before that version's crawl.
		d := v.CrawledAt.Add(-time.Duration(r.Float64() * float64(min(48*time.Hour, v.CrawledAt.Sub(versions[i-1].CrawledAt))))).UTC().Truncate(24 * time.Hour)
		v.StoreUpdated = &d
	}
	meta.StoreUpdated = versions[len(versions)-1].StoreUpdated
	return append(dst, versions[:len(versions)-1]...)
}

// clampUpdated keeps a version's store update date no later than the day
// of the crawl that read it.
func clampUpdated(v *analytics.ListingRow) {
	if v.StoreUpdated == nil {
		return
	}
	if day := v.CrawledAt.UTC().Truncate(24 * time.Hour); v.StoreUpdated.After(day) {
		v.StoreUpdated = &day
	}
}

// undoUpdate returns the version before next: next with one update
// undone (see history).
func (g *Generator) undoUpdate(r *rand.Rand, p *plan, next analytics.ListingRow) analytics.ListingRow {
	prev := next
	prev.Version = previousVersion(next.Version)
	prev.Permissions, prev.HostAccess = slices.Clone(next.Permissions), slices.Clone(next.HostAccess)
	if p.store.ReadsManifests() && next.Kind != views.KindTheme {
		if u := r.Float64(); u < 0.03 && len(prev.Permissions) > 0 {
			k := r.IntN(len(prev.Permissions)) // added by this update
			prev.Permissions = slices.Delete(prev.Permissions, k, k+1)
		} else if u < 0.06 {
			if pw := permissionWeights[r.IntN(len(permissionWeights))]; !contains(prev.Permissions, pw.name) {
				prev.Permissions = append(prev.Permissions, pw.name) // removed by this update
			}
		}
		if u := r.Float64(); u < 0.02 && len(prev.HostAccess) > 0 {
			if slices.ContainsFunc(prev.HostAccess, views.HostReachesAll) {
				// Widened to every host by this update, from a few sites.
				prev.HostAccess = []string{someHosts[r.IntN(len(someHosts))]}
				prev.AccessLevel = max(1, min(prev.AccessLevel, 2))
			} else {
				k := r.IntN(len(prev.HostAccess))
				prev.HostAccess = slices.Delete(prev.HostAccess, k, k+1)
			}
		} else if u < 0.03 {
			if h := someHosts[r.IntN(len(someHosts))]; !contains(prev.HostAccess, h) {
				prev.HostAccess = append(prev.HostAccess, h)
			}
		}
		if next.ManifestVersion == 3 && r.Float64() < 0.01 {
			prev.ManifestVersion = 2
		}
	}
	if r.Float64() < 0.004 {
		prev.Developer = devFirst[r.IntN(len(devFirst))] + " " + devSecond[r.IntN(len(devSecond))] // sold by its last owner
	}
	if r.Float64() < 0.015 {
		if base, ok := strings.CutSuffix(next.Name, " Pro"); ok {
			prev.Name = base
		} else {
			prev.Name = nameAdjectives[r.IntN(len(nameAdjectives))] + " " + nameNouns[r.IntN(len(nameNouns))]
		}
	}
	if cats := categories[p.store]; r.Float64() < 0.005 {
		prev.Category = cats[r.IntN(len(cats))]
	}
	if r.Float64() < 0.01 {
		prev.Featured = !next.Featured
	}
	return prev
}

// previousVersion returns the version number before v: its last number
// less one, borrowing from the ones before it ("2.1.0" → "2.0.9"); v
// itself when it has no number to lower ("Varies with device").
func previousVersion(v string) string {
	parts := strings.Split(v, ".")
	for i := len(parts) - 1; i >= 0; i-- {
		n, err := strconv.Atoi(parts[i])
		if err != nil || n < 0 {
			return v
		}
		if n > 0 {
			parts[i] = strconv.Itoa(n - 1)
			return strings.Join(parts, ".")
		}
		parts[i] = "9"
	}
	return v
}

func slugify(s string) string {
	var b strings.Builder
	dash := false
	for _, c := range strings.ToLower(s) {
		if (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') {
			b.WriteRune(c)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// arena hands out pointers and small slices from large blocks, so a
// snapshot row's nullable values cost no allocation of their own.
type arena[T any] struct{ buf []T }

func (a *arena[T]) ptr(v T) *T {
	if len(a.buf) == cap(a.buf) {
		a.buf = make([]T, 0, 4096)
	}
	a.buf = append(a.buf, v)
	return &a.buf[len(a.buf)-1]
}

func (a *arena[T]) slice(n int) []T {
	if cap(a.buf)-len(a.buf) < n {
		a.buf = make([]T, 0, 4096)
	}
	l := len(a.buf)
	a.buf = a.buf[:l+n]
	return a.buf[l : l+n : l+n]
}

// Generate returns every row of the dataset o, in memory: the rows Write
// writes (for tests of small datasets that need no database).
func Generate(o Options) *Rows {
	g := NewGenerator(o)
	rows := &Rows{}
	for i := range o.Listings {
		g.Append(rows, i)
	}
	return rows
}
