package event

import (
	"bufio"
	"os"
	"regexp"
	"slices"
	"testing"
)

// eventHeading matches a level-3 heading naming an event type, "### `run.queued`".
var eventHeading = regexp.MustCompile("^###\\s+`([^`]+)`\\s*$")

// TestCatalogMatchesEventsDoc keeps docs/EVENTS.md in step with Catalog: the
// set of "### `type`" headings must equal the set of catalogued types.
func TestCatalogMatchesEventsDoc(t *testing.T) {
	const path = "../../docs/EVENTS.md"
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer f.Close()

	documented := map[string]int{}
	inFence := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if len(line) >= 3 && line[:3] == "```" {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		if m := eventHeading.FindStringSubmatch(line); m != nil {
			documented[m[1]]++
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read %s: %v", path, err)
	}

	catalogued := map[string]bool{}
	for _, info := range Catalog() {
		catalogued[string(info.Type)] = true
	}

	var missing, extra, duplicated []string
	for typ := range catalogued {
		if documented[typ] == 0 {
			missing = append(missing, typ)
		}
	}
	for typ, n := range documented {
		if !catalogued[typ] {
			extra = append(extra, typ)
		}
		if n > 1 {
			duplicated = append(duplicated, typ)
		}
	}
	slices.Sort(missing)
	slices.Sort(extra)
	slices.Sort(duplicated)
	if len(missing) > 0 {
		t.Errorf("%s lacks a \"### `type`\" section for catalogued types: %v", path, missing)
	}
	if len(extra) > 0 {
		t.Errorf("%s documents types that are not in Catalog(): %v", path, extra)
	}
	if len(duplicated) > 0 {
		t.Errorf("%s documents types more than once: %v", path, duplicated)
	}
}
