package e2etest

import (
	"database/sql"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	_ "modernc.org/sqlite" // the scanner reads the database file directly
)

// SecretLeaks lists where hay holds a secret or any 8-character piece of
// one.
func SecretLeaks(hay string, secrets []string) []string {
	var found []string
	for _, s := range secrets {
		for i := 0; i+8 <= len(s); i++ {
			if w := s[i : i+8]; strings.Contains(hay, w) {
				found = append(found, fmt.Sprintf("%q (part of %s…)", w, s[:6]))
				break
			}
		}
	}
	return found
}

// ScanDB reads every text of every row of every table of the SQLite file
// at path (read-only) and reports, as test errors, each that holds a
// secret. It returns how many rows it read and their texts, so that the
// caller can check the scan saw what it should have.
func ScanDB(tb testing.TB, path string, secrets []string) (rows int, dump string) {
	tb.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	tables := queryStrings(tb, db, `SELECT name FROM sqlite_master WHERE type = 'table'`)
	var all strings.Builder
	for _, table := range tables {
		rs, err := db.Query(`SELECT * FROM "` + table + `"`)
		if err != nil {
			tb.Fatal(err)
		}
		cols, _ := rs.Columns()
		for rs.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rs.Scan(ptrs...); err != nil {
				tb.Fatal(err)
			}
			rows++
			for i, v := range vals {
				var text string
				switch v := v.(type) {
				case string:
					text = v
				case []byte:
					text = string(v)
				default:
					continue
				}
				all.WriteString(text)
				all.WriteByte('\n')
				if l := SecretLeaks(text, secrets); len(l) > 0 {
					tb.Errorf("table %s, column %s holds %v", table, cols[i], l)
				}
			}
		}
		if err := rs.Close(); err != nil {
			tb.Fatal(err)
		}
	}
	return rows, all.String()
}

func queryStrings(tb testing.TB, db *sql.DB, q string) []string {
	tb.Helper()
	rs, err := db.Query(q)
	if err != nil {
		tb.Fatal(err)
	}
	defer rs.Close()
	var out []string
	for rs.Next() {
		var s string
		if err := rs.Scan(&s); err != nil {
			tb.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rs.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// ScanFiles fails tb for every file under dir, but those named in skip,
// whose bytes hold one of secrets or an 8-character piece of one.
func ScanFiles(tb testing.TB, dir string, secrets []string, skip ...string) {
	tb.Helper()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || slices.Contains(skip, path) {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if l := SecretLeaks(string(b), secrets); len(l) > 0 {
			tb.Errorf("%s holds %v", path, l)
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
}
