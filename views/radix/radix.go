// Package radix sorts listing indexes by integer keys in linear time:
// the orders of millions of listings are rebuilt on every reload.
package radix

// Item is a listing index with an unsigned sort key.
type Item struct {
	Key   uint64
	Index int32
}

// Sort sorts items by key, ascending, stably (equal keys keep their
// order), in 16-bit digits; a digit that is the same for every item is
// skipped. It uses one scratch slice of the same length. The sort
// orders of package listq sort packed words instead (SortBits); this serves a name sort's
// long runs and keys too wide to pack.
func Sort(items []Item) {
	if len(items) < 2 {
		return
	}
	src, dst := items, make([]Item, len(items))
	var counts [1 << 16]int
	for shift := uint(0); shift < 64; shift += 16 {
		clear(counts[:])
		for _, it := range src {
			counts[(it.Key>>shift)&0xffff]++
		}
		if counts[(src[0].Key>>shift)&0xffff] == len(src) {
			continue // every item has this digit
		}
		pos := 0
		for d, c := range counts {
			counts[d] = pos
			pos += c
		}
		for _, it := range src {
			d := (it.Key >> shift) & 0xffff
			dst[counts[d]] = it
			counts[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &items[0] {
		copy(items, src)
	}
}

// DescKey maps a signed key to an unsigned one whose ascending order is the
// signed key's descending order.
func DescKey(k int64) uint64 { return ^(uint64(k) ^ 1<<63) }

// digitBits is the widest digit SortBits uses: 2^11 counters
// and as many write positions stay in the first cache levels while a
// pass scatters millions of items, where 2^16 of them would not.
const digitBits = 11

// SortBits sorts items, ascending and stably, by their bits from
// from up, where those from to up are zero in every item: items whose
// lower bits already hold their order (a packed key above a listing
// index, in index order) need no pass over those. It makes one pass
// to count every digit, then one pass a digit that is not the same for
// every item, and uses scratch when it is long enough; it returns the
// scratch it used.
func SortBits(items, scratch []uint64, from, to uint) []uint64 {
	if len(items) < 2 || to <= from {
		return scratch
	}
	if cap(scratch) < len(items) {
		scratch = make([]uint64, len(items))
	}
	scratch = scratch[:len(items)]
	passes := (to - from + digitBits - 1) / digitBits
	width := (to - from + passes - 1) / passes // equal digits, at most digitBits
	mask := uint64(1)<<width - 1
	counts := make([][1 << digitBits]int, passes)
	for _, it := range items {
		for p := range passes {
			counts[p][(it>>(from+p*width))&mask]++
		}
	}
	src, dst := items, scratch
	for p := range passes {
		shift := from + p*width
		c := &counts[p]
		if c[(src[0]>>shift)&mask] == len(src) {
			continue // every item has this digit
		}
		pos := 0
		for d := range c[:mask+1] {
			c[d], pos = pos, pos+c[d]
		}
		for _, it := range src {
			d := (it >> shift) & mask
			dst[c[d]] = it
			c[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &items[0] {
		copy(items, src)
	}
	return scratch
}
