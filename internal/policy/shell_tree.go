package policy

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// converter walks a syntax tree into a script. Compound commands are
// flattened: their bodies become pipelines of the same script, in source
// order, so the checks see every simple command wherever it is nested.
type converter struct {
	// src is the text the tree's positions point into.
	src string
	// depth is how deeply src is nested in other command lines.
	depth int
	vars  *varTable
	// fn is the function whose body is being walked.
	fn string
	// top receives findings.
	top *script
	err error
	// usePos, when set, is where in the command line an arithmetic value
	// being evaluated was used (the value's own text has other positions).
	usePos int
	// level counts arithmetic values evaluated inside one another.
	level int
}

func newConverter(src string, depth int, vars *varTable) *converter {
	return &converter{src: src, depth: depth, vars: vars, usePos: -1}
}

func (c *converter) file(f *syntax.File) *script {
	s := &script{}
	c.top = s
	c.stmts(s, f.Stmts)
	// Every value an integer variable is given is evaluated as
	// arithmetic, also those given by read, for or printf -v.
	c.usePos = len(c.src) + 1 // after every assignment
	for name := range c.vars.integer {
		if len(c.vars.values[name]) > 0 || c.vars.tainted[name] || c.vars.all {
			c.evalVar(s, name, f)
		}
	}
	c.usePos = -1
	return s
}

func (c *converter) fail(err parseError) {
	if c.err == nil {
		c.err = err
	}
}

func (c *converter) report(risk, reason string) {
	c.top.findings = append(c.top.findings, finding{risk: risk, reason: reason})
}

// slice is the source text of a node.
func (c *converter) slice(n syntax.Node) string {
	from, to := int(n.Pos().Offset()), int(n.End().Offset())
	if from < 0 || to > len(c.src) || from > to {
		return ""
	}
	return c.src[from:to]
}

// pos is the offset a use of a variable counts at.
func (c *converter) pos(n syntax.Node) int {
	if c.usePos >= 0 {
		return c.usePos
	}
	return int(n.Pos().Offset())
}

func (c *converter) stmts(s *script, list []*syntax.Stmt) {
	for _, st := range list {
		c.stmt(s, st)
	}
}

// stmt adds a statement: an and-or list becomes one pipeline per element.
func (c *converter) stmt(s *script, st *syntax.Stmt) {
	if st == nil {
		return
	}
	if b, ok := st.Cmd.(*syntax.BinaryCmd); ok && (b.Op == syntax.AndStmt || b.Op == syntax.OrStmt) {
		// Lists can be long ("a && b && ..."): walk the left spine
		// without recursing on it.
		var right []*syntax.Stmt
		var redirs []*syntax.Redirect
		x := st
		for {
			b, ok := x.Cmd.(*syntax.BinaryCmd)
			if !ok || b.Op != syntax.AndStmt && b.Op != syntax.OrStmt {
				break
			}
			redirs = append(redirs, x.Redirs...)
			right = append(right, b.Y)
			x = b.X
		}
		c.stmt(s, x)
		for i := len(right) - 1; i >= 0; i-- {
			c.stmt(s, right[i])
		}
		if len(redirs) > 0 || st.Background {
			c.pipeline(s, &syntax.Stmt{Redirs: redirs, Background: st.Background})
		}
		return
	}
	c.pipeline(s, st)
}

// pipeline adds a statement that is one pipeline (possibly of one command).
func (c *converter) pipeline(s *script, st *syntax.Stmt) {
	var elems []*syntax.Stmt
	x := st
	for {
		b, ok := x.Cmd.(*syntax.BinaryCmd)
		if !ok || b.Op != syntax.Pipe && b.Op != syntax.PipeAll || len(x.Redirs) > 0 {
			break
		}
		elems = append(elems, b.Y)
		x = b.X
	}
	elems = append(elems, x)
	pl := pipeline{background: st.Background || st.Coprocess || st.Disown}
	for i := len(elems) - 1; i >= 0; i-- {
		pl.cmds = append(pl.cmds, c.command(s, elems[i]))
	}
	if forkBombPipeline(pl) {
		s.forkBomb = true
	}
	s.pipelines = append(s.pipelines, pl)
}

// command converts one element of a pipeline. A compound command's body is
// added to s first; the element itself keeps only the redirections.
func (c *converter) command(s *script, st *syntax.Stmt) *command {
	cmd := &command{fn: c.fn}
	switch x := st.Cmd.(type) {
	case nil:
	case *syntax.CallExpr:
		for _, a := range x.Assigns {
			c.assign(s, a)
		}
		for _, w := range x.Args {
			cmd.words = append(cmd.words, c.word(s, w))
		}
	default:
		c.compound(s, st.Cmd)
	}
	for _, r := range st.Redirs {
		cmd.redirs = append(cmd.redirs, c.redirect(s, r))
	}
	return cmd
}

func (c *converter) compound(s *script, cmd syntax.Command) {
	switch x := cmd.(type) {
	case *syntax.Block:
		c.stmts(s, x.Stmts)
	case *syntax.Subshell:
		c.stmts(s, x.Stmts)
	case *syntax.BinaryCmd:
		// A list or pipeline with redirections of its own.
		c.stmt(s, x.X)
		c.stmt(s, x.Y)
	case *syntax.IfClause:
		for ; x != nil; x = x.Else {
			c.stmts(s, x.Cond)
			c.stmts(s, x.Then)
		}
	case *syntax.WhileClause:
		c.stmts(s, x.Cond)
		c.stmts(s, x.Do)
	case *syntax.ForClause:
		switch l := x.Loop.(type) {
		case *syntax.WordIter:
			for _, w := range l.Items {
				c.word(s, w)
			}
		case *syntax.CStyleLoop:
			c.arith(s, l.Init)
			c.arith(s, l.Cond)
			c.arith(s, l.Post)
		default:
			c.fail(errUnsupported)
		}
		c.stmts(s, x.Do)
	case *syntax.CaseClause:
		c.word(s, x.Word)
		for _, it := range x.Items {
			for _, p := range it.Patterns {
				c.word(s, p)
			}
			c.stmts(s, it.Stmts)
		}
	case *syntax.FuncDecl:
		outer := c.fn
		if x.Name != nil {
			c.fn = x.Name.Value
		}
		c.stmt(s, x.Body)
		c.fn = outer
	case *syntax.ArithmCmd:
		c.arith(s, x.X)
	case *syntax.TestClause:
		c.test(s, x.X)
	case *syntax.DeclClause:
		c.decl(s, x)
	case *syntax.LetClause:
		for _, e := range x.Exprs {
			c.arith(s, e)
		}
	case *syntax.TimeClause:
		c.stmt(s, x.Stmt)
	case *syntax.CoprocClause:
		// coproc runs its command in the background, like "cmd &".
		if x.Name != nil {
			c.word(s, x.Name)
		}
		if x.Stmt != nil {
			st := *x.Stmt
			st.Background = true
			c.stmt(s, &st)
		}
	case *syntax.TestDecl:
		c.word(s, x.Description)
		c.stmt(s, x.Body)
	default:
		c.fail(errUnsupported)
	}
}

// assign walks an assignment: its value and subscript run expansions, and a
// value given to an integer variable is evaluated as arithmetic.
func (c *converter) assign(s *script, a *syntax.Assign) {
	if a.Index != nil {
		c.subscript(s, a.Name, a.Index)
	}
	if a.Value != nil {
		w := c.word(s, a.Value)
		if a.Name != nil && c.vars.integer[a.Name.Value] {
			c.arithWord(s, a.Value, w)
		}
		if a.Name != nil {
			c.prompt(s, a.Name.Value, a.Value, w)
		}
	}
	if a.Array != nil {
		for _, e := range a.Array.Elems {
			if e.Index != nil {
				c.subscript(s, a.Name, e.Index)
			}
			if e.Value != nil {
				w := c.word(s, e.Value)
				if a.Name != nil && c.vars.integer[a.Name.Value] {
					c.arithWord(s, e.Value, w)
				}
			}
		}
	}
}

// decl walks declare, local, export, readonly and typeset.
func (c *converter) decl(s *script, d *syntax.DeclClause) {
	for _, a := range d.Args {
		if a.Name == nil && a.Value != nil {
			// An option, or an argument whose meaning is only known
			// at run time ("$x", 'a[$(id)]=1').
			w := c.word(s, a.Value)
			if !strings.HasPrefix(w.text, "-") && !strings.HasPrefix(w.text, "+") {
				c.nameArgument(w)
			}
			continue
		}
		c.assign(s, a)
	}
}

// subscript walks an array subscript: arithmetic, except for associative
// arrays, whose keys are plain words.
func (c *converter) subscript(s *script, name *syntax.Lit, index syntax.ArithmExpr) {
	if name != nil && c.vars.isAssoc(name.Value, c.pos(index)) {
		if w, ok := index.(*syntax.Word); ok {
			c.word(s, w)
			return
		}
	}
	if w, ok := index.(*syntax.Word); ok && (isLitWord(w, "@") || isLitWord(w, "*")) {
		return
	}
	c.arith(s, index)
}

func isLitWord(w *syntax.Word, v string) bool {
	if len(w.Parts) != 1 {
		return false
	}
	l, ok := w.Parts[0].(*syntax.Lit)
	return ok && l.Value == v
}

func (c *converter) redirect(s *script, r *syntax.Redirect) redirect {
	out := redirect{op: r.Op.String()}
	if r.Word != nil {
		out.target = c.word(s, r.Word)
	}
	if r.Op == syntax.Hdoc || r.Op == syntax.DashHdoc {
		body := ""
		if r.Hdoc != nil {
			body = c.slice(r.Hdoc)
			c.word(s, r.Hdoc)
		}
		out.body = &body
	}
	return out
}

// test walks the expression of [[ ]]. Its numeric comparisons evaluate both
// sides as arithmetic.
func (c *converter) test(s *script, e syntax.TestExpr) {
	switch x := e.(type) {
	case nil:
	case *syntax.BinaryTest:
		switch x.Op {
		case syntax.TsEql, syntax.TsNeq, syntax.TsLss, syntax.TsGtr, syntax.TsLeq, syntax.TsGeq:
			for _, side := range []syntax.TestExpr{x.X, x.Y} {
				if w, ok := side.(*syntax.Word); ok {
					c.arithWord(s, w, c.word(s, w))
				} else {
					c.test(s, side)
				}
			}
		default:
			c.test(s, x.X)
			c.test(s, x.Y)
		}
	case *syntax.UnaryTest:
		if w, ok := x.X.(*syntax.Word); ok && (x.Op == syntax.TsVarSet || x.Op == syntax.TsRefVar) {
			c.nameArgument(c.word(s, w))
			return
		}
		c.test(s, x.X)
	case *syntax.ParenTest:
		c.test(s, x.X)
	case *syntax.Word:
		c.word(s, x)
	default:
		c.fail(errUnsupported)
	}
}

// word converts a word, walking the commands its expansions run.
func (c *converter) word(s *script, w *syntax.Word) word {
	var out word
	if w == nil {
		return out
	}
	out.raw = c.slice(w)
	var b strings.Builder
	c.parts(s, &out, &b, w.Parts, false)
	out.text = b.String()
	if hasBraceExpansion(w) {
		out.dynamic = true // {a,b} and {1..9} expand to several words
	}
	return out
}

func hasBraceExpansion(w *syntax.Word) bool {
	cp := &syntax.Word{Parts: w.Parts}
	return syntax.SplitBraces(cp)
}

func (c *converter) parts(s *script, out *word, b *strings.Builder, parts []syntax.WordPart, inDQ bool) {
	expansion := func(n syntax.Node) {
		out.dynamic = true
		b.WriteString(c.slice(n))
		out.litFrom = b.Len()
	}
	for _, p := range parts {
		switch x := p.(type) {
		case *syntax.Lit:
			literal(out, b, x.Value, inDQ)
		case *syntax.SglQuoted:
			out.quoted = true
			if x.Dollar {
				// ANSI-C quoting ($'\x72m'): escapes make any text, so
				// the word counts as dynamic rather than being decoded.
				expansion(x)
				continue
			}
			b.WriteString(x.Value)
		case *syntax.DblQuoted:
			out.quoted = true
			c.parts(s, out, b, x.Parts, true)
		case *syntax.ParamExp:
			c.param(s, x)
			expansion(x)
		case *syntax.CmdSubst:
			sub := c.substitution(x.Stmts)
			s.nested = append(s.nested, sub)
			out.subs = append(out.subs, sub)
			expansion(x)
		case *syntax.ProcSubst:
			// The program reads or writes a pipe to a command that
			// runs alongside.
			sub := c.substitution(x.Stmts)
			s.nested = append(s.nested, sub)
			out.subs = append(out.subs, sub)
			expansion(x)
		case *syntax.ArithmExp:
			c.arith(s, x.X)
			expansion(x)
		case *syntax.ExtGlob:
			out.glob = true
			b.WriteString(c.slice(x))
		case *syntax.BraceExp:
			expansion(x)
		default:
			c.fail(errUnsupported)
		}
	}
}

// substitution converts the commands of a command or process substitution:
// a script of its own, checked like the command line around it.
func (c *converter) substitution(list []*syntax.Stmt) *script {
	sub := &script{}
	outerFn := c.fn
	c.fn = ""
	c.stmts(sub, list)
	c.fn = outerFn
	return sub
}

// literal adds unquoted (or double-quoted) text, removing the backslashes
// that quote.
func literal(out *word, b *strings.Builder, v string, inDQ bool) {
	bracket := false
	for i := 0; i < len(v); i++ {
		ch := v[i]
		if ch == '\\' {
			if i+1 >= len(v) {
				b.WriteByte('\\')
				continue
			}
			next := v[i+1]
			if inDQ && strings.IndexByte("$`\"\\\n", next) < 0 {
				b.WriteByte('\\')
				continue
			}
			out.quoted = true
			if next != '\n' {
				b.WriteByte(next)
			}
			i++
			continue
		}
		if !inDQ {
			switch ch {
			case '*', '?':
				out.glob = true
			case '[':
				bracket = true
			case ']':
				if bracket {
					out.glob = true
				}
			}
		}
		b.WriteByte(ch)
	}
}

// param walks a parameter expansion: the words and arithmetic it holds, and
// the expansions that run code found in a variable's value.
func (c *converter) param(s *script, p *syntax.ParamExp) {
	if p.Index != nil {
		c.subscript(s, p.Param, p.Index)
	}
	if p.Slice != nil {
		c.arith(s, p.Slice.Offset)
		c.arith(s, p.Slice.Length)
	}
	if p.Repl != nil {
		c.word(s, p.Repl.Orig)
		c.word(s, p.Repl.With)
	}
	if p.Exp != nil {
		w := c.word(s, p.Exp.Word)
		if p.Exp.Op == syntax.OtherParamOps && strings.Contains(w.text, "P") {
			// ${x@P} expands the value like a prompt, which runs the
			// command substitutions in it.
			c.report(RiskDangerous, "Prompt expansion runs the commands in a value (${…@P})")
		}
	}
	if p.NestedParam != nil || p.Flags != nil || len(p.Modifiers) > 0 {
		c.fail(errUnsupported) // zsh only
	}
	if p.Excl && p.Names == 0 && p.Param != nil && p.Index == nil {
		// ${!x} expands the variable x names; a name with a subscript
		// ("a[$(cmd)]") evaluates the subscript.
		c.indirect(p)
	}
}

// forkBombPipeline reports whether a pipeline in a function's body calls
// that function through a pipe or in the background: each call then starts
// two more, without end.
func forkBombPipeline(pl pipeline) bool {
	if len(pl.cmds) < 2 && !pl.background {
		return false
	}
	for _, c := range pl.cmds {
		if c.fn != "" && len(c.words) > 0 && c.words[0].raw == c.fn {
			return true
		}
	}
	return false
}

// prompt checks an assignment to a prompt variable: bash expands PS4 for
// every command under set -x (and the others in interactive shells) like
// a double-quoted string, running the command substitutions in it, and
// runs PROMPT_COMMAND as a command line.
func (c *converter) prompt(s *script, name string, value *syntax.Word, w word) {
	switch name {
	case "PS0", "PS1", "PS2", "PS3", "PS4", "PROMPT_COMMAND":
	default:
		return
	}
	text, ok := literalText(value)
	if !ok {
		c.report(RiskUnparsed, "Sets "+name+" to a value only known when the command runs")
		return
	}
	if name == "PROMPT_COMMAND" {
		c.inner(s, text)
		return
	}
	doc, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Document(strings.NewReader(text))
	if err != nil || lexicalDepth(text) > maxDepth {
		c.report(RiskUnparsed, "Sets "+name+" to a prompt that could not be checked")
		return
	}
	sub := &converter{src: text, depth: c.depth, vars: c.vars, top: c.top, usePos: c.pos(value), level: c.level + 1}
	sub.word(s, doc)
	if sub.err != nil {
		c.report(RiskUnparsed, "Sets "+name+" to a prompt that could not be checked")
	}
}

// inner adds a command line found in a value as a substitution: it runs.
func (c *converter) inner(s *script, text string) {
	sub, err := parse(text, c.depth+1)
	if err != nil {
		c.report(RiskUnparsed, "Command could not be checked ("+err.Error()+")")
		return
	}
	s.nested = append(s.nested, sub)
}
