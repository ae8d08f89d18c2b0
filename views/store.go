package views

import (
	"fmt"
	"strconv"
)

// Store identifies one of the five stores. Its numeric value is the store
// number of the legacy API (0 chrome, 1 edge, 2 firefox, 3 apple,
// 4 googleplay) and the value kept in ClickHouse.
type Store uint8

// The five stores, numbered as in the legacy API.
const (
	Chrome Store = iota
	Edge
	Firefox
	Apple
	GooglePlay
)

// NumStores is the number of stores.
const NumStores = 5

// Stores lists every store in store-number order.
var Stores = [NumStores]Store{Chrome, Edge, Firefox, Apple, GooglePlay}

var storeNames = [NumStores]string{"chrome", "edge", "firefox", "apple", "googleplay"}

// String returns the store's API name, such as "chrome".
func (s Store) String() string {
	if int(s) < NumStores {
		return storeNames[s]
	}
	return "store(" + strconv.Itoa(int(s)) + ")"
}

// Valid reports whether s is one of the five stores.
func (s Store) Valid() bool { return int(s) < NumStores }

// HasUsage reports whether the store publishes a usage figure. Apple does
// not: there a listing's size is its rating count.
func (s Store) HasUsage() bool { return s != Apple }

// ReadsManifests reports whether the store's listings carry a manifest whose
// permissions and access level are read (chrome and edge).
func (s Store) ReadsManifests() bool { return s == Chrome || s == Edge }

// CollectsReviews reports whether reviews are stored for the store; they are
// not for chrome.
func (s Store) CollectsReviews() bool { return s != Chrome }

// ParseStore returns the store with the given API name.
func ParseStore(name string) (Store, error) {
	for i, n := range storeNames {
		if n == name {
			return Store(i), nil
		}
	}
	return 0, fmt.Errorf("unknown store %q: use one of chrome, edge, firefox, apple, googleplay", name)
}

// storeValues holds each store once, for Ref.
var storeValues = func() (a [NumStores]Store) {
	for i := range a {
		a[i] = Store(i)
	}
	return a
}()

// Ref returns a pointer to a shared copy of s, so that a query can point
// at a store without moving one to the heap. Callers only read it.
func (s Store) Ref() *Store { return &storeValues[s] }

// SizeMeasure says what a listing's size counts in store s: "users" on
// chrome, "installs" on edge (active installs) and googleplay, "daily
// users" on firefox (average daily users), "ratings" on apple (the number
// of ratings, as the store publishes no usage figure). Sizes of different
// measures are never compared: ranks and charts are per store.
func (s Store) SizeMeasure() string {
	switch s {
	case Chrome:
		return "users"
	case Firefox:
		return "daily users"
	case Apple:
		return "ratings"
	}
	return "installs"
}

// RisingMinSize is the smallest size a listing needs to be ranked by a
// relative movement: the rising and climbers charts, the percent sort of
// /api/v1/listings (growthpct7d) and an edition's gainersPercent and
// topClimbers. A listing going from 3 to 4 users gains 33% and passes
// hundreds of listings tied at the bottom: movements of tiny listings are
// noise. Apple sizes are rating counts, so its floor is lower.
func RisingMinSize(s Store) int64 {
	if s == Apple {
		return 100
	}
	return 1000
}
