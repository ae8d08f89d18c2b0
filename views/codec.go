package views

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// A listing's binary form carries every field, exported or not, so that a
// listing decoded from it is equal to the one encoded (replica
// snapshots: one edge of a fleet loads from ClickHouse and the others
// from its snapshot). Integers are varints; strings and byte strings are
// a length and their bytes; lists are a count and their strings. The
// form has no version of its own: the snapshot that holds it has one.

// maxCodecList bounds the strings of one list in a listing's binary
// form, so that a damaged form cannot make its reader allocate much more
// than the form's own length (every length is also checked against the
// bytes left).
const maxCodecList = 1 << 16

// AppendListing appends l's binary form to b.
func AppendListing(b []byte, l *Listing) []byte {
	b = binary.AppendVarint(b, l.FirstSeen)
	b = binary.AppendVarint(b, l.Delisted)
	b = binary.AppendVarint(b, l.ReadAt)
	b = binary.AppendVarint(b, l.usage1)
	b = binary.AppendVarint(b, l.weeklyDownloads1)
	b = binary.AppendVarint(b, l.ratingCount1)
	b = binary.LittleEndian.AppendUint32(b, math.Float32bits(l.rating1))
	b = binary.AppendVarint(b, int64(l.Updated))
	b = binary.AppendVarint(b, int64(l.Created))
	flags := byte(0)
	if l.Featured {
		flags |= 1
	}
	if l.HasStars {
		flags |= 2
	}
	b = append(b, byte(l.Store), byte(l.Kind), l.AccessLevel, l.ManifestVersion, flags)
	if l.HasStars {
		for _, s := range l.Stars {
			b = binary.AppendUvarint(b, uint64(s))
		}
	}
	b = binary.AppendVarint(b, l.MetaAt)
	b = appendHistory(b, &l.Hist)
	for _, s := range [...]string{l.ID, l.Slug, l.Name, l.Developer, l.Category, l.Description, l.Icon, l.Version} {
		b = appendString(b, s)
	}
	for _, ss := range [...][]string{l.Permissions, l.HostAccess, l.Topics} {
		b = binary.AppendUvarint(b, uint64(len(ss)))
		for _, s := range ss {
			b = appendString(b, s)
		}
	}
	return b
}

func appendHistory(b []byte, h *History) []byte {
	for _, v := range h.sizeValue {
		b = binary.AppendVarint(b, v)
	}
	for _, v := range h.sizeAt {
		b = binary.AppendUvarint(b, uint64(v))
	}
	for _, v := range h.sizeAfter {
		b = binary.AppendUvarint(b, uint64(v))
	}
	for _, v := range h.ratingValue {
		b = binary.AppendVarint(b, v)
	}
	for _, v := range h.ratingAt {
		b = binary.AppendUvarint(b, uint64(v))
	}
	for _, v := range h.ratingAfter {
		b = binary.AppendUvarint(b, uint64(v))
	}
	for _, v := range h.chartSizes {
		b = binary.AppendVarint(b, v)
	}
	b = binary.AppendVarint(b, h.climbValue)
	b = binary.AppendUvarint(b, uint64(h.climbAt))
	b = binary.AppendUvarint(b, uint64(h.computedAt))
	return appendString(b, string(h.spark))
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// ListingDecoder reads listings' binary forms (AppendListing). Its
// Intern and InternList, when set, give the shared copy of a string and
// of a list (replica.Interner), as a loader from ClickHouse shares them.
type ListingDecoder struct {
	Intern     func(string) string
	InternList func([]string) []string
	b          []byte
	err        error
}

// errShort is a binary form that ends inside a listing.
var errShort = errors.New("listing form ends early")

// Decode reads one listing from the front of b into l and returns what
// follows it. A form that is damaged (short, or with lengths past its
// end) is an error; l is then undefined.
func (d *ListingDecoder) Decode(b []byte, l *Listing) ([]byte, error) {
	d.b, d.err = b, nil
	*l = Listing{}
	l.FirstSeen = d.varint()
	l.Delisted = d.varint()
	l.ReadAt = d.varint()
	l.usage1 = d.varint()
	l.weeklyDownloads1 = d.varint()
	l.ratingCount1 = d.varint()
	l.rating1 = math.Float32frombits(d.uint32())
	l.Updated = Day(d.int32())
	l.Created = Day(d.int32())
	fixed := d.bytes(5)
	if d.err != nil {
		return nil, d.err
	}
	l.Store, l.Kind, l.AccessLevel, l.ManifestVersion = Store(fixed[0]), Kind(fixed[1]), fixed[2], fixed[3]
	l.Featured, l.HasStars = fixed[4]&1 != 0, fixed[4]&2 != 0
	if fixed[4]&^3 != 0 {
		return nil, fmt.Errorf("listing form: unknown flags %#x", fixed[4])
	}
	if l.HasStars {
		for i := range l.Stars {
			l.Stars[i] = uint32(d.uvarintMax(math.MaxUint32))
		}
	}
	l.MetaAt = d.varint()
	d.history(&l.Hist)
	for _, s := range [...]*string{&l.ID, &l.Slug, &l.Name, &l.Developer, &l.Category, &l.Description, &l.Icon, &l.Version} {
		*s = d.string()
	}
	if d.err == nil && d.Intern != nil {
		l.Developer, l.Category = d.Intern(l.Developer), d.Intern(l.Category)
	}
	for _, ss := range [...]*[]string{&l.Permissions, &l.HostAccess, &l.Topics} {
		*ss = d.list()
	}
	if d.err != nil {
		return nil, d.err
	}
	return d.b, nil
}

func (d *ListingDecoder) history(h *History) {
	for i := range h.sizeValue {
		h.sizeValue[i] = d.varint()
	}
	for i := range h.sizeAt {
		h.sizeAt[i] = d.uint32v()
	}
	for i := range h.sizeAfter {
		h.sizeAfter[i] = d.uint32v()
	}
	for i := range h.ratingValue {
		h.ratingValue[i] = d.varint()
	}
	for i := range h.ratingAt {
		h.ratingAt[i] = d.uint32v()
	}
	for i := range h.ratingAfter {
		h.ratingAfter[i] = d.uint32v()
	}
	for i := range h.chartSizes {
		h.chartSizes[i] = d.varint()
	}
	h.climbValue = d.varint()
	h.climbAt = d.uint32v()
	h.computedAt = d.uint32v()
	if s := d.string(); s != "" {
		h.spark = []byte(s)
	}
}

func (d *ListingDecoder) fail(err error) {
	if d.err == nil {
		d.err = err
	}
	d.b = nil
}

func (d *ListingDecoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail(errShort)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *ListingDecoder) int32() int32 {
	v := d.varint()
	if v < math.MinInt32 || v > math.MaxInt32 {
		d.fail(fmt.Errorf("listing form: day %d out of range", v))
		return 0
	}
	return int32(v)
}

func (d *ListingDecoder) uvarintMax(limit uint64) uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail(errShort)
		return 0
	}
	if v > limit {
		d.fail(fmt.Errorf("listing form: %d past its bound %d", v, limit))
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *ListingDecoder) uint32v() uint32 { return uint32(d.uvarintMax(math.MaxUint32)) }

func (d *ListingDecoder) uint32() uint32 {
	b := d.bytes(4)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(b)
}

func (d *ListingDecoder) bytes(n int) []byte {
	if d.err != nil || len(d.b) < n {
		d.fail(errShort)
		return nil
	}
	b := d.b[:n]
	d.b = d.b[n:]
	return b
}

func (d *ListingDecoder) string() string {
	n := d.uvarintMax(uint64(len(d.b)))
	if n == 0 {
		return ""
	}
	return string(d.bytes(int(n)))
}

func (d *ListingDecoder) list() []string {
	n := d.uvarintMax(min(maxCodecList, uint64(len(d.b))))
	if n == 0 || d.err != nil {
		return nil
	}
	ss := make([]string, n)
	for i := range ss {
		ss[i] = d.string()
		if d.Intern != nil && d.InternList == nil {
			ss[i] = d.Intern(ss[i])
		}
	}
	if d.err != nil {
		return nil
	}
	if d.InternList != nil {
		return d.InternList(ss)
	}
	return ss
}
