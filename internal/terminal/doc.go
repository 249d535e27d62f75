// Package terminal runs people's shells in a session's workspace: a real
// pseudo-terminal (github.com/creack/pty) per terminal, kept by a Manager
// per (session, person) so that a browser that reloads reattaches to the
// shell it left and sees its screen again (a bounded scrollback ring).
//
// A terminal's shell gets the environment the agent's commands get (the
// allow-listed variables of internal/tool, never a secret of the server's
// own), runs in a session and process group of its own, and is killed
// with everything it left behind when the terminal closes: its shell
// exits, its owner closes it, it idles (no client attached and no output
// for Config.Idle) or the server stops. Where internal/proctrack works, a
// terminal is recorded there too, so the shells of a crashed server are
// swept like the agent's background processes.
//
// Terminal commands are the person's, not the agent's: they need no
// approval. The API logs who opened and closed which terminal and each
// line typed (LineLog).
package terminal
