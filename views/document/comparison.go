package document

// ComparedListing is one listing of a comparison.
type ComparedListing struct {
	Store       string        `json:"store"`
	ID          string        `json:"id"`
	Name        string        `json:"name"`
	SizeMeasure string        `json:"sizeMeasure"`
	Size        []*int64      `json:"size"`
	RatingCount []*int64      `json:"ratingCount"`
	Rating      []*float64    `json:"rating"`
	Growth      *WindowGrowth `json:"growth"`
}

// WindowGrowth is a compared listing's growth over the window: from its
// first day with a size to its last.
type WindowGrowth struct {
	From    string   `json:"from"`
	To      string   `json:"to"`
	Change  int64    `json:"change"`
	Percent *float64 `json:"percent"`
}

// Comparison is the daily series of 2 to 10 listings over the same
// days, as /api/v1/compare, its CSV and the comparison's page give it.
type Comparison struct {
	Days     int               `json:"days"`
	From     string            `json:"from"`
	To       string            `json:"to"`
	Dates    []string          `json:"dates"`
	Listings []ComparedListing `json:"listings"`
}
