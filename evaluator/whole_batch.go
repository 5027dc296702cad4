package evaluator

// batch gathers records to be decoded together: one decode per batch instead of one per record.
type batch struct {
	buf   []byte // a prefix, then the records, comma-separated
	head  int    // the prefix's length
	ends  []int  // where each record's bytes end in buf
	first int    // the part's index of the batch's first record
	ord   uint32 // the ordinal of the batch's first record
	limit int    // how many records fill it
}

// batchRecords and batchBytes bound a batch: a few hundred records, never much more than a
// max-size export's bytes.
const (
	batchRecords = 512
	batchBytes   = 256 << 10
)

func (b *batch) reset(prefix []byte, first int, ord uint32, limit int) {
	b.buf, b.head, b.ends, b.first, b.ord = append(b.buf[:0], prefix...), len(prefix), b.ends[:0], first, ord
	b.limit = limit
}

// add appends a record and reports whether the batch is full.
func (b *batch) add(raw []byte) bool {
	if len(b.ends) > 0 {
		b.buf = append(b.buf, ',')
	}
	b.buf = append(b.buf, raw...)
	b.ends = append(b.ends, len(b.buf))
	return len(b.ends) >= b.limit || len(b.buf)-b.head >= batchBytes
}

// raw is the bytes of the batch's k-th record.
func (b *batch) raw(k int) []byte {
	start := b.head
	if k > 0 {
		start = b.ends[k-1] + 1
	}
	return b.buf[start:b.ends[k]]
}
