package terminal_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/creack/pty"

	"github.com/caduceus-dev/caduceus/internal/terminal"
)

// benchChunk is the output each iteration asks the shell for.
const benchChunk = 1 << 20

func benchCommand(i int) string {
	return fmt.Sprintf("head -c %d /dev/zero | tr '\\0' x; echo; echo M$((%d*1))X\n", benchChunk, i)
}

// BenchmarkOutput: a shell's output through a terminal (pty, scrollback
// ring, the attached client's channel), against the same shell on a bare
// pty read directly: what the Manager's bookkeeping costs.
func BenchmarkOutput(b *testing.B) {
	b.Run("terminal", func(b *testing.B) {
		m := terminal.New(terminal.Config{Shell: "/bin/sh", Environ: []string{"PATH=" + os.Getenv("PATH")}})
		defer m.Close()
		tm, err := m.Open(b.Context(), terminal.Spec{SessionID: "s", Owner: "o", Dir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		_, c := tm.Attach()
		b.SetBytes(benchChunk)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			marker := []byte(fmt.Sprintf("M%dX", i))
			fmt.Fprint(tm, benchCommand(i))
			var tail []byte
			for !bytes.Contains(tail, marker) {
				chunk, ok := <-c.Out
				if !ok {
					b.Fatalf("detached: %s", c.Taken())
				}
				tail = append(tail[max(0, len(tail)-32):], chunk...)
			}
		}
	})
	b.Run("bare-pty", func(b *testing.B) {
		cmd := exec.Command("/bin/sh")
		cmd.Dir = b.TempDir()
		f, err := pty.Start(cmd)
		if err != nil {
			b.Fatal(err)
		}
		defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); f.Close() }()
		buf := make([]byte, 32<<10)
		b.SetBytes(benchChunk)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			marker := []byte(fmt.Sprintf("M%dX", i))
			fmt.Fprint(f, benchCommand(i))
			var tail []byte
			for !bytes.Contains(tail, marker) {
				n, err := f.Read(buf)
				if err != nil {
					b.Fatal(err)
				}
				tail = append(tail[max(0, len(tail)-32):], buf[:n]...)
			}
		}
	})
}
