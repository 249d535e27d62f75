package secret

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// FDVar names the inherited descriptor through which an earlier image of
// the process hands its secrets to the next one (see Env.Hide).
const FDVar = "CADUCEUS_SECRETS_FD"

// maxHandover bounds what is read from the handover descriptor: an
// environment is far smaller, and a descriptor that never ends must not
// exhaust memory.
const maxHandover = 16 << 20

// Env is the process's environment as Caduceus reads it: the variables it
// was started with plus those an earlier image of the process removed from
// the environment and handed over (Hide). Read it with Getenv; it is a
// snapshot taken at start and never changes.
type Env struct {
	environ  []string          // as given, in order
	vars     map[string]string // environ, then the handed-over secrets
	received map[string]string // the handed-over secrets
}

// LoadEnv reads environ (os.Environ()) and, when it names a handover
// descriptor (FDVar), the secrets handed over through it. The descriptor
// is read to its end and closed, so nothing of it outlives this call.
func LoadEnv(environ []string) (*Env, error) {
	e := &Env{environ: slices.Clone(environ), vars: map[string]string{}, received: map[string]string{}}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			e.vars[k] = v
		}
	}
	fdText, ok := e.vars[FDVar]
	if !ok {
		return e, nil
	}
	fd, err := strconv.Atoi(fdText)
	if err != nil || fd < 3 {
		return nil, fmt.Errorf("%s=%q is not an inherited descriptor", FDVar, fdText)
	}
	got, err := receive(fd)
	if err != nil {
		return nil, fmt.Errorf("reading the secrets handed over on descriptor %d: %w", fd, err)
	}
	for k, v := range got {
		e.vars[k] = v
		e.received[k] = v
	}
	// Exec through /proc/self/exe names the process "exe" in ps, top and
	// pgrep; give it back the name it was started with.
	if len(os.Args) > 0 {
		restoreName(filepath.Base(os.Args[0]))
	}
	return e, nil
}

// receive reads and closes the handover pipe.
func receive(fd int) (map[string]string, error) {
	f := os.NewFile(uintptr(fd), "secrets")
	if f == nil {
		return nil, errors.New("not open")
	}
	defer f.Close()
	// Only a pipe is what Hide leaves behind; anything else (a descriptor
	// number inherited by accident) is refused rather than read.
	if fi, err := f.Stat(); err != nil {
		return nil, err
	} else if fi.Mode()&os.ModeNamedPipe == 0 {
		return nil, errors.New("not a pipe")
	}
	b, err := io.ReadAll(io.LimitReader(f, maxHandover+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxHandover {
		return nil, errors.New("too large")
	}
	return decode(b)
}

// Getenv returns the variable's value, "" when unset.
func (e *Env) Getenv(name string) string { return e.vars[name] }

// Received reports whether an earlier image handed secrets over.
func (e *Env) Received() bool { return len(e.received) > 0 }

// Secrets returns the values of the variables named and of every variable
// whose name looks secret, in a stable order, for redaction.
func (e *Env) Secrets(names ...string) []string {
	var out []string
	for k, v := range e.vars {
		if v != "" && k != FDVar && (LooksSecret(k) || slices.Contains(names, k)) {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// split returns environ without the secret variables (those named, and
// those whose names look secret) and the secrets it removed that have a
// value.
func (e *Env) split(names []string) (keep []string, secrets map[string]string) {
	secrets = map[string]string{}
	for _, kv := range e.environ {
		k, v, _ := strings.Cut(kv, "=")
		if k != FDVar && (LooksSecret(k) || slices.Contains(names, k)) {
			if v != "" {
				secrets[k] = v
			}
			continue
		}
		keep = append(keep, kv)
	}
	return keep, secrets
}

// Hide makes the process keep no secret in its environment, where any
// process allowed to read /proc/<pid>/environ — a command the agent runs
// as the same user or as root — would find it. When the environment holds
// a variable named in names, or one whose name looks secret, Hide
// re-executes the process's own binary (the same pid, so pid files and
// supervisors are not disturbed) with argv and an environment without
// them, and hands their values to the new image over an inherited pipe
// that LoadEnv reads and closes. On success it does not return. It returns
// nil at once when there is nothing to hide, when this image already
// received a handover (it never loops), or where re-executing is not
// supported (not Linux).
func (e *Env) Hide(argv []string, names ...string) error {
	if _, again := e.vars[FDVar]; again {
		return nil
	}
	keep, secrets := e.split(names)
	if len(secrets) == 0 {
		return nil
	}
	return reexec(argv, keep, encode(secrets))
}

// encode writes name=value pairs, each ended by a NUL (which no variable
// can hold), sorted so that the handover is deterministic.
func encode(secrets map[string]string) []byte {
	keys := make([]string, 0, len(secrets))
	for k := range secrets {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b bytes.Buffer
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(secrets[k])
		b.WriteByte(0)
	}
	return b.Bytes()
}

func decode(b []byte) (map[string]string, error) {
	out := map[string]string{}
	for len(b) > 0 {
		entry, rest, ok := bytes.Cut(b, []byte{0})
		if !ok {
			return nil, errors.New("truncated")
		}
		k, v, ok := strings.Cut(string(entry), "=")
		if !ok || k == "" {
			return nil, errors.New("malformed")
		}
		out[k] = v
		b = rest
	}
	return out, nil
}
