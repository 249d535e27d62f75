// Package checkpoint records the state of a workspace before every change
// an agent or a person makes to it, says what changed between two states,
// and puts files back.
//
// # A shadow git repository per workspace
//
// Each workspace has a git repository of its own under the directory the
// server gives (<data-dir>/checkpoints/<hash of the workspace path>.git):
// a bare repository used with GIT_DIR set to it and GIT_WORK_TREE set to
// the workspace, with its index inside it. A checkpoint is `git add --all`
// into that index, `git write-tree`, `git commit-tree` with the metadata
// as trailers of the message, and a ref refs/caduceus/checkpoints/<id>.
// hermes and Cline do the same; we chose it over the alternatives because:
//
//   - Copying files costs the whole workspace's bytes per checkpoint and a
//     full read of every file to learn what changed. git stores each
//     content once (a checkpoint with nothing changed is one small commit
//     object), and its index remembers each file's size and mtime, so
//     finding what changed reads only the files whose stat changed.
//   - git already honours .gitignore files in every directory, detects
//     renames and binary files, and writes unified diffs that the UI and
//     the model know.
//   - go-git in process would save the exec per call (~2 ms) but took
//     6-8 times as long as the git binary for a checkpoint of 10,000
//     files with nothing changed, over the 100 ms target
//     (docs/BENCHMARKS.md, "Checkpoints"), and would be a large
//     dependency; the git binary is on every machine that runs coding
//     agents.
//
// The workspace's own .git is never read or written: git skips a work
// tree's top-level .git, GIT_DIR points elsewhere, and our index lives in
// the shadow repository. A nested repository below the top level is
// recorded by git as a commit id (a gitlink), not as files: its files are
// not checkpointed and Restore skips it.
//
// Every git call is a fresh process without a shell, with a timeout and an
// environment built from nothing: no inherited GIT_* variables, no global
// or system configuration (GIT_CONFIG_GLOBAL=/dev/null,
// GIT_CONFIG_NOSYSTEM=1), no hooks, no prompts, a fixed author and
// committer. The shadow repository's info/attributes turns off end-of-line
// conversion and filters whatever the workspace's .gitattributes say, so a
// blob is the file's bytes and a restore writes back exactly what was
// there.
//
// The checkpoint directory and Options.Exclude (the server's data dir) are
// never checkpointed when a workspace contains them: a workspace that is
// the home directory holds the data dir, and each checkpoint would hold
// the ones before it.
//
// # History without a branch
//
// Checkpoint commits have no git parents; the previous checkpoint of the
// workspace is named in a trailer instead, and refs/caduceus/latest points
// at the newest. Pruning the oldest checkpoints is deleting their refs and
// collecting garbage (gc.auto=0 everywhere, so git never does it on its
// own): nothing newer references them, so no history is rewritten.
//
// # One host, several processes
//
// The checkpoint directory belongs to the host whose workspaces it records:
// a workspace path means a directory on this machine. Calls on one
// workspace are serialised twice: a semaphore orders a process's callers
// (a process makes one Checkpointer per checkpoint directory and shares it
// between the runner and the API), and an flock(2) on <repo>.lock orders
// the processes of the host that share the directory (the web tier saving
// a person's edit, runner processes checkpointing the agent's calls). The
// kernel drops a dead process's flock, so a crash leaves no stale lock. A
// git lock file that a killed git left behind is removed at once when the
// Checkpointer killed it (its context ended) and otherwise once it is
// older than the timeout of a git call, so a crash or a cancelled run
// mid-checkpoint does not stop every later one.
package checkpoint
