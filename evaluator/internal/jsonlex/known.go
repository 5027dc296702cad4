package jsonlex

// Known steps over the next n bytes of the text as a value the caller has read before in this
// text, at the same depth, and found whole: the same bytes read the same way, so there is nothing
// to check again. The caller vouches for that (the mutation-log reader compares the bytes with a
// key object it read in full); a reader that has failed stays failed.
func (r *Reader) Known(n int) {
	if r.failed || n < 0 || n > len(r.src)-r.i {
		r.fail()
		return
	}
	r.i += n
}
