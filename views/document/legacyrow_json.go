package document

import (
	"time"

	"github.com/edge-stats/edge/internal/jsonw"
)

// AppendJSON appends r's JSON, the bytes encoding/json.Marshal gives
// (TestLegacyRowAppendsAsMarshal): an uncached page writes up to 200 rows.
func (r *LegacyRow) AppendJSON(b []byte) []byte {
	b = append(b, '{')
	b = jsonw.String(jsonw.Key(b, "id"), r.ID)
	b = jsonw.StringPtr(jsonw.Key(b, "s"), r.S)
	b = jsonw.String(jsonw.Key(b, "n"), r.N)
	b = jsonw.String(jsonw.Key(b, "d"), r.D)
	b = jsonw.String(jsonw.Key(b, "c"), r.C)
	b = jsonw.Int(jsonw.Key(b, "t"), int64(r.T))
	b = jsonw.Int(jsonw.Key(b, "p"), int64(r.P))
	b = jsonw.IntPtr(jsonw.Key(b, "i"), r.I)
	b = jsonw.IntPtr(jsonw.Key(b, "wd"), r.WD)
	b = jsonw.StringPtr(jsonw.Key(b, "cd"), r.CD)
	b = jsonw.FloatPtr(jsonw.Key(b, "r"), r.R)
	b = jsonw.IntPtr(jsonw.Key(b, "rc"), r.RC)
	b = jsonw.String(jsonw.Key(b, "v"), r.V)
	b = jsonw.StringPtr(jsonw.Key(b, "u"), r.U)
	b = jsonw.Time(jsonw.Key(b, "fs"), r.FS)
	b = jsonw.TimePtr(jsonw.Key(b, "du"), r.DU)
	b = jsonw.Int(jsonw.Key(b, "al"), int64(r.AL))
	b = jsonw.String(jsonw.Key(b, "ic"), r.IC)
	b = jsonw.Bool(jsonw.Key(b, "f"), r.F)
	b = jsonw.String(jsonw.Key(b, "ds"), r.DS)
	b = jsonw.Slice(jsonw.Key(b, "sp"), r.SP, func(b []byte, p *[2]int64) []byte {
		b = append(jsonw.Int(append(b, '['), p[0]), ',')
		return append(jsonw.Int(b, p[1]), ']')
	})
	ints := [...]struct {
		name string
		v    *int64
	}{{"g1", r.G1}, {"g7", r.G7}, {"g30", r.G30}, {"g365", r.G365}}
	for _, f := range ints {
		b = jsonw.IntPtr(jsonw.Key(b, f.name), f.v)
	}
	pcts := [...]struct {
		name string
		v    *float64
	}{{"g1p", r.G1P}, {"g7p", r.G7P}, {"g30p", r.G30P}, {"g365p", r.G365P}}
	for _, f := range pcts {
		b = jsonw.FloatPtr(jsonw.Key(b, f.name), f.v)
	}
	times := [...]struct {
		name string
		v    *time.Time
	}{{"g1b", r.G1B}, {"g7b", r.G7B}, {"g30b", r.G30B}, {"g365b", r.G365B}}
	for _, f := range times {
		b = jsonw.TimePtr(jsonw.Key(b, f.name), f.v)
	}
	b = jsonw.IntPtr(jsonw.Key(b, "rg1"), r.RG1)
	b = jsonw.IntPtr(jsonw.Key(b, "rg7"), r.RG7)
	b = jsonw.FloatPtr(jsonw.Key(b, "rg1p"), r.RG1P)
	b = jsonw.FloatPtr(jsonw.Key(b, "rg7p"), r.RG7P)
	b = jsonw.TimePtr(jsonw.Key(b, "rg1b"), r.RG1B)
	b = jsonw.TimePtr(jsonw.Key(b, "rg7b"), r.RG7B)
	b = jsonw.TimePtr(jsonw.Key(b, "lc"), r.LC)
	return append(b, '}')
}
