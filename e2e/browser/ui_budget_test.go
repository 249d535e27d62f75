package browser

// Budgets of issue 4, reported rather than enforced where they are timings
// (a loaded CI machine must not fail a build over milliseconds): the initial
// bundle size (enforced: it is deterministic), opening a 2,000-message
// session, and main-thread responsiveness while text streams at 100
// tokens/s. Each number is logged as one "budget: name=value" line and
// written to <screenshots>/budgets.txt.
//
// These tests are not parallel, so other browsers do not skew their timings.

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/id"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/sqlite"
)

var budgetFile struct {
	sync.Mutex
	truncated bool
}

// budget logs one measurement and appends it to budgets.txt (truncated at
// the first measurement of the test process).
func budget(t *testing.T, format string, args ...any) {
	t.Helper()
	line := "budget: " + fmt.Sprintf(format, args...)
	t.Log(line)
	budgetFile.Lock()
	defer budgetFile.Unlock()
	flags := os.O_CREATE | os.O_WRONLY | os.O_APPEND
	if !budgetFile.truncated {
		flags |= os.O_TRUNC
		budgetFile.truncated = true
	}
	f, err := os.OpenFile(filepath.Join(screenshotDir(t), "budgets.txt"), flags, 0o644)
	if err != nil {
		t.Logf("budgets.txt: %v", err)
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "%s %s\n", line, t.Name())
}

func gzipSize(t *testing.T, b []byte) int {
	t.Helper()
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Len()
}

func TestUIBudgetBundleSize(t *testing.T) {
	const limitKB = 150.0
	dist := filepath.Join("..", "..", "internal", "web", "dist") // from e2e/browser
	total := 0
	var parts []string
	initial := append([]string{"index.html", "app.css"}, staticImports(t, dist, "app.js")...)
	for _, name := range initial {
		b, err := os.ReadFile(filepath.Join(dist, name))
		if err != nil {
			t.Fatalf("the bundle is not built (cd ui && node build.mjs): %v", err)
		}
		n := gzipSize(t, b)
		total += n
		parts = append(parts, fmt.Sprintf("%s=%.1f", strings.NewReplacer(".", "_", "chunks/", "").Replace(name), float64(n)/1024))
	}
	kb := float64(total) / 1024
	budget(t, "initial_js_css_gzip_kb=%.1f (limit %.0f) %s", kb, limitKB, strings.Join(parts, " "))
	if kb > limitKB {
		t.Errorf("initial JS+CSS+HTML is %.1f KB gzipped, over the %.0f KB budget", kb, limitKB)
	}
	// Lazy chunks (math, terminal, settings) are not part of the initial
	// load; report them.
	chunks, _ := filepath.Glob(filepath.Join(dist, "chunks", "*"))
	lazy, files := 0, 0
	for _, c := range chunks {
		if slices.Contains(initial, "chunks/"+filepath.Base(c)) {
			continue
		}
		b, err := os.ReadFile(c)
		if err == nil {
			lazy += gzipSize(t, b)
			files++
		}
	}
	budget(t, "lazy_chunks_gzip_kb=%.1f files=%d", float64(lazy)/1024, files)
}

// staticImport is an ES module's import of another file that the browser
// fetches before running it (import … from "./x.js", import "./x.js"); an
// import("./x.js") call is not one.
var staticImport = regexp.MustCompile(`(?:^|[;}\n])\s*import\s*(?:[\w$*{][^"'()]*?from\s*)?"(\./[^"]+)"`)

// staticImports returns name and every module it imports statically,
// transitively, relative to dist: what a page loading name downloads at
// once (esbuild splits code an entry shares with a lazy chunk into a
// chunk of its own, which the entry then imports).
func staticImports(t *testing.T, dist, name string) []string {
	t.Helper()
	seen := []string{}
	var walk func(string)
	walk = func(n string) {
		if slices.Contains(seen, n) {
			return
		}
		seen = append(seen, n)
		b, err := os.ReadFile(filepath.Join(dist, n))
		if err != nil {
			t.Fatalf("the bundle is not built (cd ui && node build.mjs): %v", err)
		}
		for _, m := range staticImport.FindAllSubmatch(b, -1) {
			walk(filepath.ToSlash(filepath.Join(filepath.Dir(n), string(m[1]))))
		}
	}
	walk(name)
	return seen
}

// Markdown-ish message bodies of realistic length.
var (
	userTexts = []string{
		"Can you look at why the build fails on CI but not locally?",
		"Please refactor the config loader so that env vars win over the file, and add a test for it.",
		"What does this error mean: `context deadline exceeded` when the runner claims a run?",
		"Summarise the last three commits.",
	}
	assistantParas = []string{
		"The failure comes from the **race detector**: two goroutines touch `cfg.Port` without a lock. Locally the test passes because the timing differs, but CI runs with `-race`.",
		"Here is what I changed:\n\n- `config.Load` reads the file first, then applies the environment\n- unknown keys are reported with their line number\n- the defaults live in one place, `config.Defaults()`",
		"I ran the suite twice to make sure it is not flaky. Both runs passed in about 40 seconds; the slowest package is `internal/runner` (12 s), which spends most of its time in SQLite fsyncs.",
		"The error means the claim query waited longer than the lease allows. It usually points at a long write transaction holding the database: look for a batch that never commits.",
	}
	codeBlock = "```go\nfunc Load(path string) (Config, error) {\n\tc := Defaults()\n\tif err := readFile(path, &c); err != nil {\n\t\treturn Config{}, fmt.Errorf(\"config: %w\", err)\n\t}\n\treturn applyEnv(c, os.Getenv), nil\n}\n```"
)

// seedLargeSession writes a session with pairs user+assistant exchanges
// (one completed run each) straight into a fresh data dir, before the
// server starts: sending them through HTTP would take minutes under -race.
func seedLargeSession(t *testing.T, dataDir, workspace string, pairs int) (sessionID, lastMark string) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(dataDir, "caduceus.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now().UTC().Add(-time.Hour)
	sess := store.Session{ID: id.New("ses"), Title: "A long session", Workspace: workspace, CreatedAt: now, UpdatedAt: now}
	if err := st.Write(ctx, func(tx store.Tx) error { return tx.InsertSession(ctx, sess) }); err != nil {
		t.Fatal(err)
	}
	const batch = 100
	for start := 0; start < pairs; start += batch {
		err := st.Write(ctx, func(tx store.Tx) error {
			for i := start; i < min(start+batch, pairs); i++ {
				at := now.Add(time.Duration(i) * time.Second)
				user := fmt.Sprintf("%s (message %d)", userTexts[i%len(userTexts)], i+1)
				var sb strings.Builder
				fmt.Fprintf(&sb, "Answer %d. ", i+1)
				for p := 0; p < 1+i%3; p++ {
					sb.WriteString(assistantParas[(i+p)%len(assistantParas)])
					sb.WriteString("\n\n")
				}
				if i%5 == 0 {
					sb.WriteString(codeBlock + "\n\n")
				}
				fmt.Fprintf(&sb, "End of answer %d.", i+1)
				r := store.Run{ID: id.New("run"), SessionID: sess.ID, Status: run.Completed, Input: user, Attempt: 1,
					CreatedAt: at, StartedAt: at, EndedAt: at.Add(500 * time.Millisecond)}
				if err := tx.InsertRun(ctx, r); err != nil {
					return err
				}
				turnID, msgID := id.New("trn"), id.New("msg")
				d := func(typ event.Type, p any) event.Draft {
					return event.Draft{RunID: r.ID, SessionID: sess.ID, Type: typ, Payload: p}
				}
				drafts := []event.Draft{
					d(event.RunQueued, event.RunQueuedPayload{Input: user, IfBusy: "enqueue"}),
					d(event.MessageUser, event.MessageUserPayload{MessageID: id.New("msg"), Content: user}),
					d(event.RunStarted, event.RunStartedPayload{RunnerID: "seed", Attempt: 1, Model: "demo", Provider: "demo", Demo: true}),
					d(event.TurnStarted, event.TurnStartedPayload{TurnID: turnID}),
					d(event.MessageDelta, event.DeltaPayload{ID: msgID, TurnID: turnID, Delta: sb.String()}),
					d(event.MessageDone, event.DonePayload{ID: msgID, TurnID: turnID, Text: sb.String()}),
					d(event.TurnEnded, event.TurnEndedPayload{TurnID: turnID, StopReason: "end_turn", DurationMS: 500}),
					d(event.RunDone, event.RunDonePayload{Status: "completed"}),
				}
				if _, err := tx.AppendEvents(ctx, "", drafts...); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Write(ctx, func(tx store.Tx) error { return tx.TouchSession(ctx, sess.ID, time.Now().UTC()) }); err != nil {
		t.Fatal(err)
	}
	return sess.ID, fmt.Sprintf("End of answer %d.", pairs)
}

// openProbe is installed before the page's own scripts: it records when the
// last message is on screen with the composer usable, the first input
// event, and long tasks during the load.
const openProbe = `(() => {
	const m = window.__budget = { ready: null, idle: null, input: null, longtasks: [] };
	try {
		new PerformanceObserver(l => { for (const e of l.getEntries()) m.longtasks.push(e.duration); })
			.observe({ type: "longtask", buffered: true });
	} catch (e) {}
	const check = () => {
		const items = document.querySelectorAll("[data-testid=item][data-kind=assistant]");
		const last = items[items.length - 1];
		const c = document.querySelector("textarea[data-testid=composer]");
		const tr = document.querySelector("[data-testid=transcript]");
		if (last && tr && c && !c.disabled && last.textContent.includes(MARK)) {
			const r = last.getBoundingClientRect(), v = tr.getBoundingClientRect();
			if (r.height > 0 && r.bottom > v.top && r.top < v.bottom) {
				m.ready = performance.now();
				// When the main thread is next free to handle input.
				setTimeout(() => { m.idle = performance.now(); }, 0);
				return;
			}
		}
		requestAnimationFrame(check);
	};
	requestAnimationFrame(check);
	document.addEventListener("input", e => {
		if (m.input === null && e.target.matches && e.target.matches("textarea[data-testid=composer]")) m.input = performance.now();
	}, true);
})()`

func TestUIBudgetLargeSession(t *testing.T) {
	const pairs = 1000
	chromiumPath(t) // skip before seeding when there is no browser
	dataDir, ws := t.TempDir(), t.TempDir()
	seedStart := time.Now()
	sid, mark := seedLargeSession(t, dataDir, ws, pairs)
	t.Logf("seeded %d messages in %s", 2*pairs, time.Since(seedStart).Round(time.Millisecond))
	s := e2etest.StartServer(t, e2etest.Script(e2etest.Turn(e2etest.Text("hi"))), e2etest.WithDataDir(dataDir))

	// The API alone.
	apiStart := time.Now()
	resp, err := http.Get(s.URL + "/api/sessions/" + sid + "/messages")
	if err != nil {
		t.Fatal(err)
	}
	var body bytes.Buffer
	_, _ = body.ReadFrom(resp.Body)
	resp.Body.Close()
	apiMS := float64(time.Since(apiStart).Microseconds()) / 1000
	budget(t, "messages_api_ms=%.0f items=%d bytes=%d", apiMS, 2*pairs, body.Len())

	b := openBrowser(t, s)
	ctx, cancel := context.WithTimeout(b.ctx, waitTimeout)
	_, err = chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
		Source: strings.Replace(openProbe, "MARK", js(mark), 1),
	})
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	for _, pass := range []string{"cold", "warm"} {
		b.must("navigate", chromedp.Navigate(s.URL+"/s/"+sid))
		b.waitJSFor("the last message on screen", "window.__budget && window.__budget.ready !== null && window.__budget.idle !== null", 30*time.Second)
		b.typeInto(composerSel, "x")
		b.waitJS("the input event", "window.__budget.input !== null")
		type result struct {
			Ready, Idle, Input float64
			Longtasks          []float64
			Messages           float64
			Items              int
		}
		r := eval[result](b, `(() => {
			const m = window.__budget;
			const e = performance.getEntriesByType("resource").find(e => e.name.includes("/messages"));
			return { Ready: m.ready, Idle: m.idle, Input: m.input, Longtasks: m.longtasks,
				Messages: e ? e.responseEnd - e.startTime : -1,
				Items: document.querySelectorAll("[data-testid=item]").length };
		})()`)
		maxLT, sumLT := 0.0, 0.0
		for _, d := range r.Longtasks {
			maxLT = max(maxLT, d)
			sumLT += d
		}
		budget(t, "open_2000_%s_visible_ms=%.0f interactive_ms=%.0f (limit 1000) input_event_ms=%.0f messages_fetch_ms=%.0f longtasks=%d longtask_max_ms=%.0f longtask_total_ms=%.0f dom_items=%d",
			pass, r.Ready, r.Idle, r.Input, r.Messages, len(r.Longtasks), maxLT, sumLT, r.Items)
		if r.Idle > 1000 {
			t.Logf("note: over the 1 s budget (%s pass); reported, not failed", pass)
		}
	}
}

// streamProbe measures the main thread while text streams: long tasks, the
// largest gap between animation frames, and the delay from an input event
// to the next frame.
const streamProbe = `(() => {
	const m = window.__stream = { longtasks: [], gaps: [], inputs: [], stop: false };
	new PerformanceObserver(l => { for (const e of l.getEntries()) m.longtasks.push(e.duration); }).observe({ type: "longtask" });
	let last = performance.now();
	const loop = t => { m.gaps.push(t - last); last = t; if (!m.stop) requestAnimationFrame(loop); };
	requestAnimationFrame(loop);
	document.addEventListener("input", e => {
		const t0 = e.timeStamp;
		requestAnimationFrame(() => m.inputs.push(performance.now() - t0));
	}, true);
	return true;
})()`

func TestUIBudgetStreaming(t *testing.T) {
	// ~500 words of markdown, one word (5 runes) per fragment every 10 ms:
	// 100 tokens/s for about five seconds.
	var sb strings.Builder
	vocab := []string{"data", "flow", "runs", "fast", "with", "each", "byte", "sent", "over", "wire"}
	for i := 0; i < 500; i++ {
		sb.WriteString(vocab[i%len(vocab)])
		switch {
		case i%60 == 59:
			sb.WriteString("\n\n")
		case i == 250:
			sb.WriteString("\n\n```go\nfunc main() { fmt.Println(\"streaming\") }\n```\n\n")
		default:
			sb.WriteByte(' ')
		}
	}
	s := e2etest.StartServer(t, e2etest.Scenarios(e2etest.Scenario("stream fast", e2etest.Turn(e2etest.Paced(sb.String(), 5, 10)))))
	b := openBrowser(t, s)
	sid := s.NewSession(t)
	b.navigate("/s/" + sid)
	b.waitVisible(composerSel)
	eval[bool](b, streamProbe)

	start := time.Now()
	b.sendMessage("stream fast please")
	b.waitVisible(itemSel("assistant") + "[data-open=true]")
	// Type while it streams, as a person would.
	for i := 0; i < 6; i++ {
		b.typeInto(composerSel, "a")
		time.Sleep(500 * time.Millisecond) // spacing between keystrokes, not a wait for a condition
	}
	b.waitJSFor("the stream to end", q(runStatusSel+"[data-status=idle]")+" && !"+q(itemSel("assistant")+"[data-open=true]"), 30*time.Second)
	elapsed := time.Since(start)
	type result struct {
		Longtasks, Gaps, Inputs []float64
		Words                   int
	}
	r := eval[result](b, `(() => { const m = window.__stream; m.stop = true;
		const last = Array.from(document.querySelectorAll("[data-testid=item][data-kind=assistant] .md")).at(-1);
		return { Longtasks: m.longtasks, Gaps: m.gaps.slice(1), Inputs: m.inputs,
			Words: last ? last.textContent.trim().split(/\s+/).length : 0 }; })()`)
	maxLT := 0.0
	for _, d := range r.Longtasks {
		maxLT = max(maxLT, d)
	}
	budget(t, "stream_100tps_s=%.1f words=%d longtasks=%d longtask_max_ms=%.0f frame_gap_max_ms=%.0f frame_gap_p95_ms=%.0f frames=%d input_to_frame_max_ms=%.0f input_to_frame_median_ms=%.0f inputs=%d",
		elapsed.Seconds(), r.Words, len(r.Longtasks), maxLT, slices.Max(append(r.Gaps, 0)), e2etest.Percentile(r.Gaps, 0.95), len(r.Gaps),
		slices.Max(append(r.Inputs, 0)), e2etest.Percentile(r.Inputs, 0.5), len(r.Inputs))
	if got := b.lastText(itemSel("assistant") + " .md"); !strings.Contains(got, "streaming") {
		t.Errorf("the streamed code block is missing from the final text")
	}
}
