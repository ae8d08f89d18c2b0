package views

// keyed is a listing index with an unsigned sort key.
type keyed struct {
	key uint64
	idx int32
}

// radixSort sorts items by key, ascending, stably (equal keys keep their
// order), in 16-bit digits; a digit that is the same for every item is
// skipped. It uses one scratch slice of the same length. Sort orders
// sort packed words instead (radixSortBits); this serves a name sort's
// long runs and keys too wide to pack.
func radixSort(items []keyed) {
	if len(items) < 2 {
		return
	}
	src, dst := items, make([]keyed, len(items))
	var counts [1 << 16]int
	for shift := uint(0); shift < 64; shift += 16 {
		clear(counts[:])
		for _, it := range src {
			counts[(it.key>>shift)&0xffff]++
		}
		if counts[(src[0].key>>shift)&0xffff] == len(src) {
			continue // every item has this digit
		}
		pos := 0
		for d, c := range counts {
			counts[d] = pos
			pos += c
		}
		for _, it := range src {
			d := (it.key >> shift) & 0xffff
			dst[counts[d]] = it
			counts[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &items[0] {
		copy(items, src)
	}
}

// descKey maps a signed key to an unsigned one whose ascending order is the
// signed key's descending order.
func descKey(k int64) uint64 { return ^(uint64(k) ^ 1<<63) }

// radixDigitBits is the widest digit radixSortBits uses: 2^11 counters
// and as many write positions stay in the first cache levels while a
// pass scatters millions of items, where 2^16 of them would not.
const radixDigitBits = 11

// radixSortBits sorts items, ascending and stably, by their bits from
// from up, where those from to up are zero in every item: items whose
// lower bits already hold their order (a packed key above a listing
// index, in index order) need no pass over those. It makes one pass
// to count every digit, then one pass a digit that is not the same for
// every item, and uses scratch when it is long enough; it returns the
// scratch it used.
func radixSortBits(items, scratch []uint64, from, to uint) []uint64 {
	if len(items) < 2 || to <= from {
		return scratch
	}
	if cap(scratch) < len(items) {
		scratch = make([]uint64, len(items))
	}
	scratch = scratch[:len(items)]
	passes := (to - from + radixDigitBits - 1) / radixDigitBits
	width := (to - from + passes - 1) / passes // equal digits, at most radixDigitBits
	mask := uint64(1)<<width - 1
	counts := make([][1 << radixDigitBits]int, passes)
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
