//go:build linux

package main

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// dropStartPages tells the kernel that the pages of the binary's code and read-only data read so
// far need not stay resident. The start reads much that serving never touches again: the
// embedded corpus (about 10 MB, read once by the corpus gates), the criteria compiler, the
// migrations. These are clean pages of the executable file: dropping them loses nothing, and the
// pages serving uses fault back in from the page cache at their first use (the kernel refuses
// writes to a running executable, so they come back the same). Writable mappings, and a binary
// already replaced on disk ("(deleted)"), are left alone.
//
// Dropping them from this process alone is not enough for the read-only data. A page fault on a
// file mapping maps every neighbouring page the page cache holds (the kernel's fault-around, 64
// KiB), and a read fault reads ahead around the page (128 KiB). The collector's stack scans and
// every stack growth read the function table (.gopclntab, 14 MB) one function at a time, scattered
// over the whole table, so under load the whole table came back resident (25–29 MB of the
// binary's pages at 32 audits in flight, of which 17 MB read-only data). So the read-only data is
// also dropped from the page cache (where no other process maps it; a binary just written is
// written back first, as dirty pages cannot be dropped) and marked for random access (no read
// around): the pages serving reads come back one by one, and only those (3.8 MB of read-only data
// under the same load). The code is left in the page cache: the kernel reads it back in 64 KiB
// blocks whatever it is told, and the first requests would wait on the disk for nothing.
func dropStartPages() error {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return err
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return err
	}
	// The file this process runs, even when a deploy has replaced the path since.
	f, err := os.Open("/proc/self/exe")
	if err != nil {
		return err
	}
	defer f.Close()
	fd := int(f.Fd())
	var errs []error
	sc := bufio.NewScanner(bytes.NewReader(maps))
	for sc.Scan() {
		// address perms offset dev inode path
		m := strings.Fields(sc.Text())
		if len(m) != 6 || m[5] != exe || (m[1] != "r--p" && m[1] != "r-xp") {
			continue
		}
		lo, hi, ok := strings.Cut(m[0], "-")
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		off, err3 := strconv.ParseInt(m[2], 16, 64)
		if !ok || err1 != nil || err2 != nil || err3 != nil || end <= start {
			continue
		}
		if err := madvise(start, end-start, syscall.MADV_DONTNEED); err != nil {
			errs = append(errs, err)
		}
		if m[1] != "r--p" {
			continue
		}
		n := int64(end - start)
		if err := madvise(start, end-start, syscall.MADV_RANDOM); err != nil {
			errs = append(errs, err)
		}
		if err := unix.SyncFileRange(fd, off, n, unix.SYNC_FILE_RANGE_WAIT_BEFORE|unix.SYNC_FILE_RANGE_WRITE|unix.SYNC_FILE_RANGE_WAIT_AFTER); err != nil {
			errs = append(errs, err)
		}
		if err := unix.Fadvise(fd, off, n, unix.FADV_DONTNEED); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func madvise(addr, n uint64, advice int) error {
	if _, _, e := syscall.Syscall(syscall.SYS_MADVISE, uintptr(addr), uintptr(n), uintptr(advice)); e != 0 {
		return e
	}
	return nil
}
