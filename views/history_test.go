package views

import (
	"reflect"
	"testing"
)

func TestSparklineRoundTrip(t *testing.T) {
	for _, pts := range [][]SparkPoint{
		nil,
		{{Day: 20000, Value: 0}},
		{{Day: 20000, Value: 5}, {Day: 20001, Value: 3}, {Day: 20005, Value: 1 << 40}, {Day: 20089, Value: 0}},
		{{Day: -3, Value: 7}, {Day: 2, Value: -1}},
	} {
		var h History
		h.SetSparkline(EncodeSparkline(pts))
		var got []SparkPoint
		h.Sparkline(func(p SparkPoint) { got = append(got, p) })
		if !reflect.DeepEqual(got, pts) {
			t.Errorf("round trip of %v gave %v", pts, got)
		}
	}
	// A point costs a few bytes, not a struct.
	var pts []SparkPoint
	for d := range SparkDays {
		pts = append(pts, SparkPoint{Day: Day(20000 + d), Value: int64(1000 + d*3)})
	}
	if n := len(EncodeSparkline(pts)); n > 3*SparkDays {
		t.Errorf("90 points take %d bytes", n)
	}
}

func TestMerge(t *testing.T) {
	old := NewReplica([]Listing{
		{Store: Chrome, ID: "a", Name: "a1"}, {Store: Chrome, ID: "c", Name: "c1"}, {Store: Apple, ID: "9", Name: "old"},
	}, ReplicaInfo{Generation: 1})
	b := NewReplicaBuilder(0)
	for _, l := range []Listing{{Store: Chrome, ID: "b", Name: "b2"}, {Store: Chrome, ID: "c", Name: "c2"}, {Store: GooglePlay, ID: "x", Name: "x2"}} {
		b.Add(&l)
	}
	m := Merge(old, b, ReplicaInfo{Generation: 2})
	var got []string
	for _, l := range m.All() {
		got = append(got, l.Store.String()+"/"+l.ID+"="+l.Name)
	}
	want := []string{"chrome/a=a1", "chrome/b=b2", "chrome/c=c2", "apple/9=old", "googleplay/x=x2"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("merged %v, want %v", got, want)
	}
	if m.Info().Generation != 2 || m.Lookup(Chrome, "b") == nil || m.Counts() != [NumStores]int{3, 0, 0, 1, 1} {
		t.Errorf("merged replica info %+v counts %v", m.Info(), m.Counts())
	}
	if old.Lookup(Chrome, "c").Name != "c1" || old.Len() != 3 {
		t.Error("Merge changed the old replica")
	}
}
