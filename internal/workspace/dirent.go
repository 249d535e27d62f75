package workspace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// dirent is a directory entry as getdents gives it: a name and a type, no
// stat.
type dirent struct {
	name string
	typ  fs.FileMode // fs.ModeDir, ModeSymlink, ...; 0 for a regular file
}

func (d dirent) isDir() bool { return d.typ&fs.ModeDir != 0 }

// readDirents reads all of the open directory d's entries with their
// types, without "." and "..".
//
// os.File.ReadDir cannot serve here: for a directory opened through an
// os.Root it lstats every entry (Go 1.26, os/file_unix.go newUnixDirent),
// which made the first page of a 10,000-entry directory cost ~4x a plain
// os.ReadDir. The kernel's d_type is enough to sort; only the page's
// entries are stat'ed (statAt). The directory's descriptor came from the
// Root, so what it lists is inside the workspace.
func readDirents(d *os.File) ([]dirent, error) {
	fd := int(d.Fd())
	buf := make([]byte, 64<<10)
	var out []dirent
	for {
		n, err := unix.Getdents(fd, buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return out, fmt.Errorf("getdents: %w", err)
		}
		if n <= 0 {
			return out, nil
		}
		out = parseDirents(fd, buf[:n], out)
	}
}

// linux_dirent64: ino u64, off s64, reclen u16, type u8, name (NUL-ended).
const direntNameOff = 19

func parseDirents(fd int, b []byte, out []dirent) []dirent {
	for len(b) >= direntNameOff {
		reclen := int(binary.NativeEndian.Uint16(b[16:18]))
		if reclen < direntNameOff || reclen > len(b) {
			break
		}
		rec := b[:reclen]
		b = b[reclen:]
		nameB := rec[direntNameOff:]
		for i, c := range nameB {
			if c == 0 {
				nameB = nameB[:i]
				break
			}
		}
		name := string(nameB)
		if name == "." || name == ".." {
			continue
		}
		typ, ok := direntType(rec[18])
		if !ok { // DT_UNKNOWN: some filesystems do not say
			var st unix.Stat_t
			if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				continue // vanished
			}
			typ = modeType(st.Mode)
		}
		out = append(out, dirent{name: name, typ: typ})
	}
	return out
}

func direntType(t byte) (fs.FileMode, bool) {
	switch t {
	case unix.DT_REG:
		return 0, true
	case unix.DT_DIR:
		return fs.ModeDir, true
	case unix.DT_LNK:
		return fs.ModeSymlink, true
	case unix.DT_FIFO:
		return fs.ModeNamedPipe, true
	case unix.DT_SOCK:
		return fs.ModeSocket, true
	case unix.DT_CHR:
		return fs.ModeDevice | fs.ModeCharDevice, true
	case unix.DT_BLK:
		return fs.ModeDevice, true
	}
	return 0, false
}

func modeType(m uint32) fs.FileMode {
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFLNK:
		return fs.ModeSymlink
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	case unix.S_IFSOCK:
		return fs.ModeSocket
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		return fs.ModeDevice
	}
	return 0
}

// statAt lstats the entry name (one component) of the open directory d.
func statAt(d *os.File, name string) (size int64, mtime time.Time, typ fs.FileMode, err error) {
	var st unix.Stat_t
	for {
		err = unix.Fstatat(int(d.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		return 0, time.Time{}, 0, err
	}
	return st.Size, time.Unix(st.Mtim.Unix()), modeType(st.Mode), nil
}
