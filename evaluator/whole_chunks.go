package evaluator

import (
	"cmp"
	"slices"
)

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

// flat moves the list into one slice of its exact length, letting each chunk go once copied, and
// empties the list.
func (c *chunked[T]) flat() []T {
	out := make([]T, 0, c.n)
	for i, ch := range c.chunks {
		out = append(out, ch...)
		c.chunks[i] = nil
	}
	c.chunks, c.n = nil, 0
	return out
}

// keptChunk is how many bytes of kept records one chunk of wholeFold.kept holds before the next
// is started.
const keptChunk = 1 << 20

// sortKeys sorts s by its key128 (key gives it), stably: records of one id keep their reading
// order, which is the order of their parts and places. The keys are uniform hashes, so a radix
// sort on the first half, four passes of 16 bits, does in linear time what a comparison sort did
// in a sixth of the check's time at 10⁶ records; the rare runs whose first halves tie are then
// sorted by the second half.
func sortKeys[T any](s []T, key func(*T) key128) {
	if len(s) < 2 {
		return
	}
	tmp := make([]T, len(s))
	src, dst := s, tmp
	var count [1 << 16]int
	for shift := uint(0); shift < 64; shift += 16 {
		clear(count[:])
		for i := range src {
			count[uint16(key(&src[i]).a>>shift)]++
		}
		at := 0
		for d, c := range count {
			count[d], at = at, at+c
		}
		for i := range src {
			d := uint16(key(&src[i]).a >> shift)
			dst[count[d]] = src[i]
			count[d]++
		}
		src, dst = dst, src
	}
	// Four passes: the sorted list is back in s.
	for i := 0; i < len(s); {
		j := i + 1
		for j < len(s) && key(&s[j]).a == key(&s[i]).a {
			j++
		}
		if j-i > 1 {
			slices.SortStableFunc(s[i:j], func(x, y T) int { return cmp.Compare(key(&x).b, key(&y).b) })
		}
		i = j
	}
}
