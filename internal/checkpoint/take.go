package checkpoint

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/caduceus-dev/caduceus/internal/id"
)

// Meta says who a checkpoint was taken for and why.
type Meta struct {
	SessionID  string `json:"session_id,omitempty"`
	RunID      string `json:"run_id,omitempty"`
	ToolCallID string `json:"tool_call_id,omitempty"`
	Reason     string `json:"reason,omitempty"`
}

// Checkpoint is the state of a workspace at one moment.
type Checkpoint struct {
	ID     string `json:"id"`
	Commit string `json:"commit"`
	// Parent is the checkpoint taken before this one in the same workspace
	// ("" for the first). It is recorded in the commit message, not as a
	// git parent: every checkpoint commit is a root, so pruning an old one
	// is deleting its ref and nothing newer has to be rewritten.
	Parent    string    `json:"parent,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	Meta      Meta      `json:"meta"`
	// Files changed since Parent. Empty when nothing changed and for the
	// first checkpoint of a workspace (the baseline); nil from List.
	Files []FileChange `json:"files"`

	tree string
}

const (
	refPrefix = "refs/caduceus/checkpoints/"
	// refLatest names the newest checkpoint, the parent of the next one.
	refLatest = "refs/caduceus/latest"
	idPrefix  = "ckp"
)

// Take records the workspace as it is now: every file git would add,
// honouring the workspace's .gitignore files, never its own .git. A
// checkpoint with nothing changed since the previous one is still recorded
// (it shares the previous tree, so it costs a commit object) with Files
// empty.
func (c *Checkpointer) Take(ctx context.Context, ws string, meta Meta) (Checkpoint, error) {
	w, unlock, err := c.open(ctx, ws)
	if err != nil {
		return Checkpoint{}, err
	}
	defer unlock()
	return c.take(ctx, w, meta)
}

// take is Take with the workspace lock held.
func (c *Checkpointer) take(ctx context.Context, w *workspace, meta Meta) (Checkpoint, error) {
	tree, err := stageWorkTree(ctx, w)
	if err != nil {
		return Checkpoint{}, err
	}
	prev, havePrev, err := readRef(ctx, w, refLatest)
	if err != nil {
		return Checkpoint{}, err
	}
	cp := Checkpoint{ID: id.New(idPrefix), CreatedAt: time.Now().UTC(), Meta: cleanMeta(meta), tree: tree}
	// The first checkpoint is the baseline: nothing is known before it,
	// so it lists no files (listing every file of a large workspace as
	// added would cost a read of each and say nothing).
	prevTree := tree
	if havePrev {
		cp.Parent, prevTree = prev.ID, prev.tree
		// CreatedAt orders the checkpoints (List, Prune) even when the
		// clock steps back or two fall in one instant; ids, made of
		// milliseconds and random bits, may not.
		if !cp.CreatedAt.After(prev.CreatedAt) {
			cp.CreatedAt = prev.CreatedAt.Add(time.Nanosecond)
		}
	}
	cp.Files = []FileChange{}
	if tree != prevTree {
		if cp.Files, err = diffStat(ctx, w, prevTree, tree); err != nil {
			return Checkpoint{}, err
		}
	}
	date := fmt.Sprintf("@%d +0000", cp.CreatedAt.Unix())
	out, err := runEnv(ctx, w, strings.NewReader(cp.message()),
		[]string{"GIT_AUTHOR_DATE=" + date, "GIT_COMMITTER_DATE=" + date}, "commit-tree", tree)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("checkpoint: %w", err)
	}
	cp.Commit = strings.TrimSpace(string(out))
	// One transaction: the new ref and the latest pointer move together.
	refs := fmt.Sprintf("create %s%s %s\nupdate %s %s\n", refPrefix, cp.ID, cp.Commit, refLatest, cp.Commit)
	if _, err := w.git.run(ctx, strings.NewReader(refs), "update-ref", "--stdin"); err != nil {
		return Checkpoint{}, fmt.Errorf("checkpoint: %w", err)
	}
	c.log.Debug("checkpoint taken", "workspace", w.path, "checkpoint", cp.ID, "files", len(cp.Files), "reason", cp.Meta.Reason)
	return cp, nil
}

// stageWorkTree stages the whole work tree into the shadow index (inside
// the shadow GIT_DIR) and returns its tree.
func stageWorkTree(ctx context.Context, w *workspace) (string, error) {
	args := []string{"add", "--all", "--", "."}
	for _, rel := range w.excluded {
		args = append(args, ":(exclude,literal,top)"+rel)
	}
	if _, err := w.git.run(ctx, nil, args...); err != nil {
		return "", fmt.Errorf("checkpoint: staging the workspace: %w", err)
	}
	out, err := w.git.run(ctx, nil, "write-tree")
	if err != nil {
		return "", fmt.Errorf("checkpoint: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

func runEnv(ctx context.Context, w *workspace, stdin *strings.Reader, env []string, args ...string) ([]byte, error) {
	var out bytes.Buffer
	if err := w.git.runTo(ctx, stdin, &out, env, args...); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// Trailer keys of the commit message; the message is the only place the
// metadata lives, so a shadow repository alone is enough to list its
// checkpoints.
const (
	keyID        = "Caduceus-Checkpoint"
	keyParent    = "Caduceus-Parent"
	keySession   = "Caduceus-Session"
	keyRun       = "Caduceus-Run"
	keyToolCall  = "Caduceus-Tool-Call"
	keyReason    = "Caduceus-Reason"
	keyCreatedAt = "Caduceus-Created-At"
)

func (cp Checkpoint) message() string {
	var b strings.Builder
	subject := "checkpoint"
	if cp.Meta.Reason != "" {
		subject += ": " + cp.Meta.Reason
	}
	b.WriteString(subject + "\n\n")
	for _, kv := range [][2]string{
		{keyID, cp.ID}, {keyParent, cp.Parent}, {keySession, cp.Meta.SessionID},
		{keyRun, cp.Meta.RunID}, {keyToolCall, cp.Meta.ToolCallID}, {keyReason, cp.Meta.Reason},
		{keyCreatedAt, cp.CreatedAt.Format(time.RFC3339Nano)},
	} {
		if kv[1] != "" {
			b.WriteString(kv[0] + ": " + kv[1] + "\n")
		}
	}
	return b.String()
}

// cleanMeta keeps each field on one line so it cannot forge a trailer.
func cleanMeta(m Meta) Meta {
	one := func(s string) string {
		s = strings.Map(func(r rune) rune {
			if r < 0x20 || r == 0x7f {
				return ' '
			}
			return r
		}, s)
		return strings.TrimSpace(s)
	}
	return Meta{SessionID: one(m.SessionID), RunID: one(m.RunID), ToolCallID: one(m.ToolCallID), Reason: one(m.Reason)}
}

// parseMessage reads the trailers written by message.
func parseMessage(commit, tree, msg string) (Checkpoint, bool) {
	cp := Checkpoint{Commit: commit, tree: tree}
	for line := range strings.SplitSeq(msg, "\n") {
		k, v, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		switch k {
		case keyID:
			cp.ID = v
		case keyParent:
			cp.Parent = v
		case keySession:
			cp.Meta.SessionID = v
		case keyRun:
			cp.Meta.RunID = v
		case keyToolCall:
			cp.Meta.ToolCallID = v
		case keyReason:
			cp.Meta.Reason = v
		case keyCreatedAt:
			cp.CreatedAt, _ = time.Parse(time.RFC3339Nano, v)
		}
	}
	return cp, cp.ID != ""
}

// refFormat prints commit, tree and message of each ref, NUL-separated;
// messages hold no NUL (cleanMeta), so the fields split cleanly.
const refFormat = "--format=%(objectname)%00%(tree)%00%(contents)%00"

// readRefs lists the checkpoints under the ref pattern.
func readRefs(ctx context.Context, w *workspace, pattern string) ([]Checkpoint, error) {
	out, err := w.git.run(ctx, nil, "for-each-ref", refFormat, pattern)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	fields := strings.Split(string(out), "\x00")
	var cps []Checkpoint
	for i := 0; i+2 < len(fields); i += 3 {
		if cp, ok := parseMessage(strings.TrimSpace(fields[i]), fields[i+1], fields[i+2]); ok {
			cps = append(cps, cp)
		}
	}
	return cps, nil
}

// readRef reads one checkpoint by its full ref name.
func readRef(ctx context.Context, w *workspace, ref string) (Checkpoint, bool, error) {
	cps, err := readRefs(ctx, w, ref)
	if err != nil || len(cps) == 0 {
		return Checkpoint{}, false, err
	}
	return cps[0], true, nil
}

// lookup finds the checkpoint named by cpID, refusing a malformed id
// before it reaches git.
func lookup(ctx context.Context, w *workspace, cpID string) (Checkpoint, error) {
	if !id.Valid(idPrefix, cpID) {
		return Checkpoint{}, refuse(CodeBadRequest, fmt.Sprintf("%q is not a checkpoint id", cpID))
	}
	cp, ok, err := readRef(ctx, w, refPrefix+cpID)
	if err != nil {
		return Checkpoint{}, err
	}
	if !ok {
		return Checkpoint{}, refuse(CodeNotFound, "no checkpoint "+cpID+" in this workspace (never taken, or pruned)")
	}
	return cp, nil
}

// List returns the workspace's checkpoints, oldest first, without Files.
func (c *Checkpointer) List(ctx context.Context, ws string) ([]Checkpoint, error) {
	w, unlock, err := c.open(ctx, ws)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return listSorted(ctx, w)
}

func listSorted(ctx context.Context, w *workspace) ([]Checkpoint, error) {
	cps, err := readRefs(ctx, w, refPrefix)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(cps, func(a, b Checkpoint) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return cps, nil
}

// Get returns one checkpoint with the files changed since its parent
// (empty for the first; nil when the parent has been pruned).
func (c *Checkpointer) Get(ctx context.Context, ws, cpID string) (Checkpoint, error) {
	w, unlock, err := c.open(ctx, ws)
	if err != nil {
		return Checkpoint{}, err
	}
	defer unlock()
	cp, err := lookup(ctx, w, cpID)
	if err != nil {
		return Checkpoint{}, err
	}
	prevTree := cp.tree
	if cp.Parent != "" {
		parent, ok, err := readRef(ctx, w, refPrefix+cp.Parent)
		if err != nil {
			return Checkpoint{}, err
		}
		if !ok {
			return cp, nil
		}
		prevTree = parent.tree
	}
	cp.Files = []FileChange{}
	if prevTree != cp.tree {
		if cp.Files, err = diffStat(ctx, w, prevTree, cp.tree); err != nil {
			return Checkpoint{}, err
		}
	}
	return cp, nil
}
