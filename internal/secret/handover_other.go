//go:build !linux

package secret

// reexec is Linux-only: elsewhere the secrets stay in the environment,
// and only the other measures (commands' allow-listed environment,
// redaction) apply.
func reexec(argv, env []string, payload []byte) error { return nil }

// NoDump is Linux-only; elsewhere it does nothing.
func NoDump() error { return nil }

// restoreName is Linux-only; elsewhere there was no re-exec to undo.
func restoreName(string) {}
