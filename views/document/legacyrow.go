package document

import (
	"time"

	"github.com/edge-stats/edge/views"
)

// LegacyRow is one row of the legacy API's /api/extensions, field for field as the spec
// names them. Missing values are null, never left out.
type LegacyRow struct {
	ID    string     `json:"id"`
	S     *string    `json:"s"`
	N     string     `json:"n"`
	D     string     `json:"d"`
	C     string     `json:"c"`
	T     int        `json:"t"`
	P     int        `json:"p"`
	I     *int64     `json:"i"`
	WD    *int64     `json:"wd"`
	CD    *string    `json:"cd"`
	R     *float64   `json:"r"`
	RC    *int64     `json:"rc"`
	V     string     `json:"v"`
	U     *string    `json:"u"`
	FS    time.Time  `json:"fs"`
	DU    *time.Time `json:"du"`
	AL    int        `json:"al"`
	IC    string     `json:"ic"`
	F     bool       `json:"f"`
	DS    string     `json:"ds"`
	SP    [][2]int64 `json:"sp"`
	G1    *int64     `json:"g1"`
	G7    *int64     `json:"g7"`
	G30   *int64     `json:"g30"`
	G365  *int64     `json:"g365"`
	G1P   *float64   `json:"g1p"`
	G7P   *float64   `json:"g7p"`
	G30P  *float64   `json:"g30p"`
	G365P *float64   `json:"g365p"`
	G1B   *time.Time `json:"g1b"`
	G7B   *time.Time `json:"g7b"`
	G30B  *time.Time `json:"g30b"`
	G365B *time.Time `json:"g365b"`
	RG1   *int64     `json:"rg1"`
	RG7   *int64     `json:"rg7"`
	RG1P  *float64   `json:"rg1p"`
	RG7P  *float64   `json:"rg7p"`
	RG1B  *time.Time `json:"rg1b"`
	RG7B  *time.Time `json:"rg7b"`
	LC    *time.Time `json:"lc"`
}

// NewLegacyRow returns the row of l; today is the data's newest day, from
// which the sparkline's days-ago are counted.
func NewLegacyRow(l *views.Listing, today views.Day) LegacyRow {
	var row LegacyRow
	row.Fill(l, today, new(Listing))
	return row
}

// Fill sets r to the row of l (NewLegacyRow), with d as the listing's document
// that r's values point into, reusing r's sparkline: the rows of a page
// are written one after another through one LegacyRow and one
func (r *LegacyRow) Fill(l *views.Listing, today views.Day, d *Listing) {
	d.Fill(l, nil)
	sp := r.SP[:0]
	if sp == nil {
		sp = make([][2]int64, 0, views.SparkDays) // one allocation: at most a point a day
	}
	*r = LegacyRow{ID: l.ID, S: d.Slug, N: l.Name, D: l.Developer, C: l.Category, T: int(l.Kind),
		P: int(l.Store), I: d.Usage, WD: d.WeeklyDownloads, CD: d.Created, V: l.Version, U: d.Updated,
		FS: d.FirstSeen, DU: d.DelistedAt, AL: int(l.AccessLevel), IC: l.Icon, F: l.Featured,
		DS: l.Description, SP: sp, LC: d.GrowthComputedAt}
	if d.Rating != nil {
		r.R, r.RC = d.Rating, d.RatingCount
	}
	l.Hist.Sparkline(func(p views.SparkPoint) {
		if ago := int64(today - p.Day); ago >= 0 && ago < views.SparkDays {
			r.SP = append(r.SP, [2]int64{ago, p.Value})
		}
	})
	set := func(c *Change, g **int64, p **float64, b **time.Time) {
		if c != nil {
			*g, *p, *b = &c.Change, c.Percent, &c.Since
		}
	}
	set(d.Growth.D1, &r.G1, &r.G1P, &r.G1B)
	set(d.Growth.D7, &r.G7, &r.G7P, &r.G7B)
	set(d.Growth.D30, &r.G30, &r.G30P, &r.G30B)
	set(d.Growth.D365, &r.G365, &r.G365P, &r.G365B)
	if d.RatingGrowth != nil {
		set(d.RatingGrowth.D1, &r.RG1, &r.RG1P, &r.RG1B)
		set(d.RatingGrowth.D7, &r.RG7, &r.RG7P, &r.RG7B)
	}
}
