// Command port moves a test file written against the old single e2e
// package (unexported harness: startServer, do, srv.newSession, ...) into
// the package that now holds its kind of test, rewritten to the exported
// harness of e2e/e2etest:
//
//	go run ./e2e/port e2e/walkthrough_test.go e2e/ui_polish_test.go
//
// ui_*_test.go files go to e2e/browser, files that start processes to
// e2e/processes, the rest to e2e/api (-to overrides). The rewrite is
// syntactic: names the file declares itself, or the destination package
// declares, are left alone, and the compiler reports anything it missed.
// Methods the file declares on harness types (func (s *server) ...) cannot
// move to another package; they are reported, to be made functions by hand.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

const importPath = "github.com/caduceus-dev/caduceus/e2e/e2etest"

// free maps the old harness's package-level names to the exported ones.
var free = map[string]string{
	"server": "Server", "serverOpt": "ServerOpt", "lockedBuffer": "LockedBuffer",
	"withApprovalTTL": "WithApprovalTTL", "withToken": "WithToken", "withApprovalMode": "WithApprovalMode",
	"withEnv": "WithEnv", "withWorkspace": "WithWorkspace", "withDataDir": "WithDataDir", "withRetries": "WithRetries",
	"writeScript": "WriteScript", "startServer": "StartServer", "do": "Do",
	"sessionJSON": "SessionJSON", "runJSON": "RunJSON", "requestJSON": "RequestJSON", "errorJSON": "ErrorJSON",
	"stream": "Stream", "openStream": "OpenStream", "isType": "IsType", "isDone": "IsDone", "payload": "Payload",
	"checkJournal": "CheckJournal", "countType": "CountType", "deltas": "Deltas", "ofType": "OfType",
	"checkOnce": "CheckOnce", "summarize": "Summarize", "percentile": "Percentile",
	"text": "Text", "reasoning": "Reasoning", "delay": "Delay", "call": "Call", "turn": "Turn", "script": "Script",
	"slowText": "SlowText", "paced": "Paced", "scenario": "Scenario", "scenarios": "Scenarios",
	"child": "Child", "launch": "Launch", "webProc": "WebProc", "runnerProc": "RunnerProc",
	"startServeBin": "StartServe", "startRunnerBin": "StartRunner", "startWeb": "StartWeb", "startRunner": "StartRunner",
	"killPidFile": "KillPidFile", "waitFile": "WaitFile",
	"statusJSON": "StatusJSON", "startedJSON": "StartedJSON", "runnerJSON": "RunnerJSON", "healthJSON": "HealthJSON",
}

// withBinary are the old helpers that used the package's binary; the new
// ones take it as their second argument: binary in e2e/processes (built by
// TestMain), binary(t) in e2e/browser (built on first use).
var withBinary = map[string]bool{"startWeb": true, "startRunner": true}

// selectors maps methods and fields of the harness types.
var selectors = map[string]string{
	"newSession": "NewSession", "send": "Send", "run": "Run", "waitStatus": "WaitStatus", "waitRun": "WaitRun",
	"pending": "Pending", "runs": "Runs", "sessions": "Sessions", "journal": "Journal", "health": "Health",
	"stop": "Stop", "until": "Until", "drain": "Drain", "events": "Events", "c": "Child", "pid": "PID",
}

// harnessTypes are the old types whose methods cannot be declared outside
// e2etest.
var harnessTypes = map[string]bool{"server": true, "stream": true, "webProc": true, "runnerProc": true, "child": true}

func main() {
	to := flag.String("to", "", "destination package: api, processes or browser (default: by file)")
	keep := flag.Bool("keep", false, "keep the source file")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: go run ./e2e/port [-to api|processes|browser] [-keep] e2e/x_test.go ...")
		os.Exit(2)
	}
	methods, err := harnessMethods(flag.Args())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	failed := false
	for _, src := range flag.Args() {
		if err := port(src, *to, *keep, methods); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", src, err)
			failed = true
		}
	}
	if failed {
		os.Exit(1)
	}
}

func port(src, to string, keep bool, methods map[string]bool) error {
	raw, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, src, raw, parser.ParseComments)
	if err != nil {
		return err
	}
	if to == "" {
		to = destination(filepath.Base(src), f)
	}
	dstDir := filepath.Join(filepath.Dir(src), to)
	dst := filepath.Join(dstDir, filepath.Base(src))
	if _, err := os.Stat(dst); err == nil {
		return fmt.Errorf("%s exists", dst)
	}
	declared, err := packageNames(dstDir)
	if err != nil {
		return err
	}
	skip := unmethod(f, methods, declared)
	used := rewrite(f, declared, skip, to == "browser")
	f.Name.Name = to

	var buf bytes.Buffer
	if err := format.Node(&buf, fset, f); err != nil {
		return err
	}
	out := buf.Bytes()
	if used {
		out = addImport(out)
	}
	if out, err = format.Source(out); err != nil {
		return fmt.Errorf("formatting the result: %w", err)
	}
	if err := os.WriteFile(dst, out, 0o644); err != nil {
		return err
	}
	fmt.Printf("%s -> %s\n", src, dst)
	if !keep {
		return os.Remove(src)
	}
	return nil
}

// destination picks the package by the file's name and what it starts.
func destination(name string, f *ast.File) string {
	if strings.HasPrefix(name, "ui_") {
		return "browser"
	}
	procs := false
	ast.Inspect(f, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok {
			switch id.Name {
			case "binary", "benchBinary", "startWeb", "startRunner", "startServeBin", "startRunnerBin", "launch", "startProc":
				procs = true
			}
		}
		return !procs
	})
	if procs {
		return "processes"
	}
	return "api"
}

// packageNames lists the package-level names declared in dir.
func packageNames(dir string) (map[string]bool, error) {
	out := map[string]bool{}
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	for _, p := range files {
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					out[d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						out[s.Name.Name] = true
					case *ast.ValueSpec:
						for _, n := range s.Names {
							out[n.Name] = true
						}
					}
				}
			}
		}
	}
	return out, nil
}

// rewrite renames references to the old harness in place and reports
// whether the file now uses e2etest. The printer prints an identifier's
// name verbatim, so a free name becomes a qualified one by renaming it.
// Identifiers in skip are left alone.
func rewrite(f *ast.File, declared map[string]bool, skip map[*ast.Ident]bool, lazyBinary bool) bool {
	used := false
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok {
			skip[fd.Name] = true
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			skip[n.Sel] = true
			if x, ok := n.X.(*ast.Ident); ok && isPackage(f, x.Name) {
				return true
			}
			if to, ok := selectors[n.Sel.Name]; ok {
				n.Sel.Name = to
			}
		case *ast.KeyValueExpr:
			if k, ok := n.Key.(*ast.Ident); ok {
				skip[k] = true // a struct field's name
			}
		case *ast.BranchStmt:
			if n.Label != nil {
				skip[n.Label] = true
			}
		case *ast.LabeledStmt:
			skip[n.Label] = true
		case *ast.CallExpr:
			if id, ok := n.Fun.(*ast.Ident); ok && withBinary[id.Name] && id.Obj == nil && !declared[id.Name] && len(n.Args) > 0 {
				var bin ast.Expr = ast.NewIdent("binary")
				if lazyBinary {
					bin = &ast.CallExpr{Fun: ast.NewIdent("binary"), Args: []ast.Expr{n.Args[0]}}
				}
				n.Args = append([]ast.Expr{n.Args[0], bin}, n.Args[1:]...)
			}
		case *ast.Ident:
			if skip[n] || n.Obj != nil || declared[n.Name] {
				return true
			}
			if to, ok := free[n.Name]; ok {
				n.Name = "e2etest." + to
				used = true
			}
		}
		return true
	})
	return used
}

// receiverType is the harness type a method is declared on, or "".
func receiverType(fd *ast.FuncDecl, declared map[string]bool) string {
	if fd.Recv == nil || len(fd.Recv.List) != 1 {
		return ""
	}
	t := fd.Recv.List[0].Type
	if st, ok := t.(*ast.StarExpr); ok {
		t = st.X
	}
	if id, ok := t.(*ast.Ident); ok && harnessTypes[id.Name] && !declared[id.Name] {
		return id.Name
	}
	return ""
}

// harnessMethods lists the methods the files declare on harness types.
func harnessMethods(files []string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, p := range files {
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && receiverType(fd, nil) != "" {
				out[fd.Name.Name] = true
			}
		}
	}
	return out, nil
}

// unmethod turns the file's methods on harness types, which cannot be
// declared on e2etest's types, into functions taking the receiver first,
// and calls x.m(args) of them into m(x, args). It returns the identifiers
// it made, which the renaming must leave alone.
func unmethod(f *ast.File, methods, declared map[string]bool) map[*ast.Ident]bool {
	made := map[*ast.Ident]bool{}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || receiverType(fd, declared) == "" {
			continue
		}
		fd.Type.Params.List = append([]*ast.Field{fd.Recv.List[0]}, fd.Type.Params.List...)
		fd.Recv = nil
		fmt.Fprintf(os.Stderr, "note: method %s is now a function taking its receiver first\n", fd.Name.Name)
	}
	ast.Inspect(f, func(n ast.Node) bool {
		c, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := c.Fun.(*ast.SelectorExpr)
		if !ok || !methods[sel.Sel.Name] {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); ok && isPackage(f, x.Name) {
			return true
		}
		id := ast.NewIdent(sel.Sel.Name)
		made[id] = true
		c.Fun, c.Args = id, append([]ast.Expr{sel.X}, c.Args...)
		return true
	})
	return made
}

// isPackage reports whether name is an import of f.
func isPackage(f *ast.File, name string) bool {
	for _, im := range f.Imports {
		p := strings.Trim(im.Path.Value, `"`)
		n := p[strings.LastIndex(p, "/")+1:]
		if im.Name != nil {
			n = im.Name.Name
		}
		if n == name {
			return true
		}
	}
	return false
}

var packageLine = regexp.MustCompile(`(?m)^package \w+\n`)

// addImport adds e2etest to the imports: into the group of this module's
// packages when there is one, else as a group of its own at the end.
func addImport(src []byte) []byte {
	s := string(src)
	line := "\t\"" + importPath + "\"\n"
	if i := strings.Index(s, "\nimport (\n"); i >= 0 {
		if j := strings.Index(s[i:], "\n)\n"); j >= 0 {
			at := i + j + 1
			block := s[i:at]
			last := block[strings.LastIndex(block, "\n\n")+1:]
			if strings.Contains(last, "\"github.com/caduceus-dev/caduceus/") {
				return []byte(s[:at] + line + s[at:])
			}
			return []byte(s[:at] + "\n" + line + s[at:])
		}
	}
	if i := strings.Index(s, "\nimport \""); i >= 0 {
		end := i + 1 + strings.Index(s[i+1:], "\n")
		spec := strings.TrimPrefix(s[i+1:end], "import ")
		return []byte(s[:i+1] + "import (\n\t" + spec + "\n\n" + line + ")" + s[end:])
	}
	loc := packageLine.FindStringIndex(s)
	if loc == nil {
		return src
	}
	return []byte(s[:loc[1]] + "\nimport \"" + importPath + "\"\n" + s[loc[1]:])
}
