package render

import "strconv"

// StarTable is a listing's ratings by star, five stars first, as the
// store publishes them (templates/list.html, "stars").
type StarTable struct {
	Total string // every rating counted, in words ("1,234")
	Rows  []StarRow
}

// StarRow is the ratings of one star count: its label, its count (Raw
// for the tests, the JSON's stars[Index]), its share of all and the
// bar's length out of 100.
type StarRow struct {
	Label, Count, Raw, Share string
	Index, Length            int
}

// StarsTable returns the table of stars, counts from one star to five (the
// document's stars), or nil when the store gives none.
func StarsTable(stars *[5]uint32) *StarTable {
	if stars == nil {
		return nil
	}
	var total uint64
	for _, n := range stars {
		total += uint64(n)
	}
	t := &StarTable{Total: Int(int64(total))}
	for i := 4; i >= 0; i-- {
		n := stars[i]
		r := StarRow{Label: strconv.Itoa(i+1) + " ★", Count: Int(int64(n)), Raw: strconv.FormatUint(uint64(n), 10), Index: i, Share: "—"}
		if total > 0 {
			r.Share = strconv.FormatFloat(float64(n)*100/float64(total), 'f', 0, 64) + "%"
			r.Length = int(uint64(n) * 100 / total)
		}
		t.Rows = append(t.Rows, r)
	}
	return t
}
