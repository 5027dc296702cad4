package evaluator

// chunkLen is how many elements one chunk of a chunked list holds.
const chunkLen = 1 << 14

// chunked is a list that grows a fixed-size chunk at a time: appending never copies what is
// already there, as a slice's doubling does (at 10⁶ records that copying of the index's lists
// cost a seventh of the check's CPU time, and doubled their memory for a moment at each step).
type chunked[T any] struct {
	chunks [][]T
	n      int
}

func (c *chunked[T]) add(v T) {
	if k := len(c.chunks); k == 0 || len(c.chunks[k-1]) == chunkLen {
		c.chunks = append(c.chunks, make([]T, 0, chunkLen))
	}
	last := &c.chunks[len(c.chunks)-1]
	*last = append(*last, v)
	c.n++
}

// keptChunk is how many bytes of kept records one chunk of wholeFold.kept holds before the next
// is started.
const keptChunk = 1 << 20

// get is the list's i-th element.
func (c *chunked[T]) get(i int) T { return c.chunks[i/chunkLen][i%chunkLen] }
