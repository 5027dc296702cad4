package api

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

// FuzzReadAtMost: read in any pieces, up to any limit, readAtMost returns what io.ReadAll of the
// same limit returns, across the chunk boundaries (4 KiB, then 16 KiB, then 64 KiB), whatever
// length the body declared (none, its own, less or more than it sends).
func FuzzReadAtMost(f *testing.F) {
	f.Add(uint32(10), uint32(5), uint8(0))
	f.Add(uint32(4096), uint32(4097), uint8(1))
	f.Add(uint32(262145), uint32(262145), uint8(2))
	f.Add(uint32(90000), uint32(20481), uint8(3))
	f.Add(uint32(261198), uint32(262145), uint8(4))
	f.Add(uint32(261198), uint32(262145), uint8(6+8))
	f.Add(uint32(200000), uint32(262145), uint8(1+8))
	f.Add(uint32(200000), uint32(150000), uint8(2+12))
	f.Fuzz(func(t *testing.T, size, limit uint32, mode uint8) {
		size, limit = size%300_000, limit%300_000
		src := make([]byte, size)
		for i := range src {
			src[i] = byte(i*7 + i>>9)
		}
		var r io.Reader = bytes.NewReader(src)
		switch mode % 4 {
		case 1:
			r = iotest.OneByteReader(r)
		case 2:
			r = iotest.HalfReader(r)
		case 3:
			r = iotest.DataErrReader(r)
		}
		declared := [...]int64{-1, int64(size), int64(size) / 2, int64(size) + 100}[mode>>2%4]
		got, pooled, err := readAtMost(r, int(limit), declared)
		if err != nil {
			t.Fatal(err)
		}
		want := src[:min(len(src), int(limit))]
		if !bytes.Equal(got, want) {
			t.Fatalf("size %d limit %d mode %d declared %d: %d bytes, want %d", size, limit, mode%4, declared, len(got), len(want))
		}
		if pooled {
			// The next input may be read into this buffer: it must read the same either way.
			recycleBody(got)
		}
	})
}

func TestReadAtMostError(t *testing.T) {
	boom := errors.New("cut")
	r := io.MultiReader(bytes.NewReader(make([]byte, 5000)), iotest.ErrReader(boom))
	if _, _, err := readAtMost(r, 10000, -1); !errors.Is(err, boom) {
		t.Fatalf("a cut body: %v", err)
	}
}

// A body's buffer given back is cleared before another body is read into it, and is used again
// only for a body it has room for.
func TestRecycledBodyBuffer(t *testing.T) {
	for len(idleBodies) > 0 {
		<-idleBodies
	}
	src := bytes.Repeat([]byte("x"), 200<<10)
	got, pooled, err := readAtMost(bytes.NewReader(src), 300<<10, int64(len(src)))
	if err != nil || !pooled || !bytes.Equal(got, src) {
		t.Fatalf("a declared 200 KiB body: pooled %v, err %v", pooled, err)
	}
	recycleBody(got)
	if n := len(idleBodies); n != 1 {
		t.Fatalf("%d idle buffers, want 1", n)
	}
	if b := got[:cap(got)]; bytes.IndexByte(b, 'x') >= 0 {
		t.Fatal("an idle buffer still holds the body")
	}
	small := bodyBuffer(100<<10, 0)
	if &small[0] != &got[0] {
		t.Fatal("the idle buffer was not used for a smaller body")
	}
	recycleBody(small)
	if big := bodyBuffer(300<<10, 0); &big[0] == &got[0] {
		t.Fatal("a buffer too small was used")
	}
}
