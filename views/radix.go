package views

// keyed is a listing index with an unsigned sort key.
type keyed struct {
	key uint64
	idx int32
}

// radixSort sorts items by key, ascending, stably (equal keys keep their
// order), in 16-bit digits; a digit that is the same for every item is
// skipped. It uses one scratch slice of the same length.
func radixSort(items []keyed) { radixSortWith(items, nil) }

// radixSortWith is radixSort with scratch as its scratch slice when it is
// long enough; it returns the scratch it used, for the next sort.
func radixSortWith(items, scratch []keyed) []keyed {
	if len(items) < 2 {
		return scratch
	}
	if cap(scratch) < len(items) {
		scratch = make([]keyed, len(items))
	}
	scratch = scratch[:len(items)]
	src, dst := items, scratch
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
	return scratch
}

// descKey maps a signed key to an unsigned one whose ascending order is the
// signed key's descending order.
func descKey(k int64) uint64 { return ^(uint64(k) ^ 1<<63) }
