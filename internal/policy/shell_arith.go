package policy

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Bash evaluates arithmetic recursively: a variable named in $((...)),
// ((...)), let, an array subscript, ${x:offset}, a [[ -eq ]] comparison or
// an assignment to an integer variable has its value evaluated as an
// arithmetic expression in turn, and array subscripts in that value run
// command substitutions ("x='a[$(rm -rf /)]'; echo $((x))"). So arithmetic
// is only safe when every value it reaches is known here: a plain number,
// or text that is itself safe arithmetic. A value set at run time (read,
// a substitution, the environment) makes the command ask.

// varValue is one value a variable is given in the command line.
type varValue struct {
	// pos is where the assignment is.
	pos int
	// text is the value; only meaningful when known.
	text  string
	known bool
}

// varTable is what a command line assigns to its variables, collected
// before it is walked. It does not follow control flow: every value given
// anywhere counts, and a variable only counts as set where some assignment
// comes before the use.
type varTable struct {
	values map[string][]varValue
	// tainted variables are set in ways whose values are not read here
	// (read, printf -v, for over expansions, ...).
	tainted map[string]bool
	// all is set when something may set any variable (eval, source, a
	// nameref, a program only known at run time).
	all bool
	// integer are the variables declared -i.
	integer map[string]bool
	// assoc are the variables that are associative arrays from the given
	// position on: declared -A by a statement of the command line itself
	// (not in a function or a condition), and never declared otherwise or
	// unset. Their subscripts are keys, not arithmetic.
	assoc map[string]int
	// declared counts the declarations of each variable; unset are the
	// variables unset anywhere.
	declared map[string]int
	unset    map[string]bool
	// visiting are the variables whose values are being evaluated.
	visiting map[string]bool
	// budget bounds the values evaluated per command line: values that
	// name each other several times would otherwise multiply the work.
	budget int
}

const maxArithEvals = 1000

func collectVars(f *syntax.File) *varTable {
	t := &varTable{
		values:   map[string][]varValue{},
		tainted:  map[string]bool{},
		integer:  map[string]bool{},
		assoc:    map[string]int{},
		declared: map[string]int{},
		unset:    map[string]bool{},
		visiting: map[string]bool{},
		budget:   maxArithEvals,
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.Assign:
			t.assign(x)
		case *syntax.DeclClause:
			t.decl(x)
		case *syntax.CallExpr:
			t.call(x)
		case *syntax.ForClause:
			if it, ok := x.Loop.(*syntax.WordIter); ok {
				if x.Select || len(it.Items) == 0 {
					t.tainted[it.Name.Value] = true
				}
				for _, w := range it.Items {
					t.record(it.Name.Value, int(it.Name.Pos().Offset()), w, false)
				}
			}
		case *syntax.BinaryArithm:
			if isArithAssign(x.Op) {
				t.number(arithTargetName(x.X), x.Pos())
			}
		case *syntax.UnaryArithm:
			if x.Op == syntax.Inc || x.Op == syntax.Dec {
				t.number(arithTargetName(x.X), x.Pos())
			}
		case *syntax.ParamExp:
			if x.Exp != nil && x.Param != nil &&
				(x.Exp.Op == syntax.AssignUnset || x.Exp.Op == syntax.AssignUnsetOrNull) {
				t.record(x.Param.Value, int(x.Pos().Offset()), x.Exp.Word, false)
			}
		}
		return true
	})
	for _, st := range f.Stmts {
		d, ok := st.Cmd.(*syntax.DeclClause)
		if !ok || !strings.ContainsRune(declAttrs(d), 'A') {
			continue
		}
		for _, a := range d.Args {
			if a.Name != nil && t.declared[a.Name.Value] == 1 && !t.unset[a.Name.Value] {
				t.assoc[a.Name.Value] = int(d.Pos().Offset())
			}
		}
	}
	return t
}

// isAssoc reports whether name is an associative array at pos.
func (t *varTable) isAssoc(name string, pos int) bool {
	at, ok := t.assoc[name]
	return ok && !t.all && at < pos
}

// declAttrs are the attribute letters a declaration sets ("-ix" -> "ix").
func declAttrs(d *syntax.DeclClause) string {
	var attrs string
	for _, a := range d.Args {
		if a.Name != nil || a.Value == nil {
			continue
		}
		if text, ok := literalText(a.Value); ok && (strings.HasPrefix(text, "-") || strings.HasPrefix(text, "+")) {
			attrs += text[1:]
		}
	}
	return attrs
}

// record notes that name is given the value of w at pos.
func (t *varTable) record(name string, pos int, w *syntax.Word, appended bool) {
	v := varValue{pos: pos}
	if w == nil {
		v.known, v.text = true, ""
	} else if arithmeticOnly(w) {
		v.known, v.text = true, "0" // $((...)) always gives a number
	} else {
		v.text, v.known = literalText(w)
	}
	if appended && !(v.known && isNumber(v.text)) {
		// x+=text appends to an earlier value.
		v.known = false
	}
	t.values[name] = append(t.values[name], v)
}

// number notes that name is given a number (arithmetic assignments always
// store one).
func (t *varTable) number(name string, pos syntax.Pos) {
	if name != "" {
		t.values[name] = append(t.values[name], varValue{pos: int(pos.Offset()), text: "0", known: true})
	}
}

func (t *varTable) assign(a *syntax.Assign) {
	if a.Name == nil {
		return
	}
	name, pos := a.Name.Value, int(a.Pos().Offset())
	switch {
	case a.Array != nil:
		for _, e := range a.Array.Elems {
			t.record(name, pos, e.Value, false)
		}
	case a.Value != nil:
		t.record(name, pos, a.Value, a.Append)
	}
}

func (t *varTable) decl(d *syntax.DeclClause) {
	var attrs string
	for _, a := range d.Args {
		if a.Name != nil || a.Value == nil {
			continue
		}
		text, ok := literalText(a.Value)
		switch {
		case !ok:
			t.all = true // declare "$x": any name, any value
		case strings.HasPrefix(text, "-") || strings.HasPrefix(text, "+"):
			attrs += text[1:]
		default:
			// A quoted name or assignment ('x=1', "a[$i]=2").
			name, _, _ := strings.Cut(text, "=")
			name, _, _ = strings.Cut(name, "[")
			t.tainted[name] = true
		}
	}
	if strings.ContainsRune(attrs, 'n') {
		t.all = true // a nameref assigns through another name
	}
	for _, a := range d.Args {
		if a.Name == nil {
			continue
		}
		t.declared[a.Name.Value]++
		if strings.ContainsRune(attrs, 'i') {
			t.integer[a.Name.Value] = true
		}
	}
}

// call notes the variables a builtin sets: read, mapfile, printf -v and
// the like set the ones they name, and eval, source or trap may set any.
func (t *varTable) call(x *syntax.CallExpr) {
	if len(x.Args) == 0 {
		return
	}
	args := x.Args
	for len(args) > 0 {
		name, ok := literalText(args[0])
		if !ok {
			t.all = true // the program is only known at run time
			return
		}
		switch name {
		case "command", "builtin", "exec", "nohup", "time", "nice", "env", "sudo", "doas", "setsid",
			"stdbuf", "timeout", "xargs":
			// A wrapper: any later word may be the builtin.
			for _, w := range args[1:] {
				if s, ok := literalText(w); ok && settersOfAll(s) {
					t.all = true
				}
			}
			args = args[1:]
			continue
		}
		switch {
		case settersOfAll(name):
			t.all = true
		case name == "unset":
			for _, w := range args[1:] {
				s, ok := literalText(w)
				if !ok {
					t.all = true
				}
				t.unset[varName(s)] = true
			}
		case name == "read" || name == "mapfile" || name == "readarray" || name == "getopts" || name == "wait":
			t.taintNames(args[1:])
		case name == "printf":
			for i, w := range args[1:] {
				s, _ := literalText(w)
				if v, ok := strings.CutPrefix(s, "-v"); ok {
					if v != "" {
						t.tainted[varName(v)] = true
					} else if i+2 < len(args) {
						t.taintNames(args[i+2 : i+3])
					}
				}
			}
		}
		return
	}
}

func settersOfAll(name string) bool {
	switch name {
	case "eval", "source", ".", "trap", "declare", "typeset", "local", "export", "readonly", "enable":
		return true
	}
	return false
}

func (t *varTable) taintNames(args []*syntax.Word) {
	for _, w := range args {
		s, ok := literalText(w)
		if !ok {
			t.all = true
			return
		}
		if n := varName(s); n != "" {
			t.tainted[n] = true
		}
	}
}

// varName is the variable an argument such as "x" or "a[1]" names.
func varName(s string) string {
	s, _, _ = strings.Cut(s, "[")
	if !isName(s) {
		return ""
	}
	return s
}

// lookup returns the values name may have at pos, or false when one of
// them is not known here.
func (t *varTable) lookup(name string, pos int) ([]varValue, bool) {
	if t.all || t.tainted[name] {
		return nil, false
	}
	vals := t.values[name]
	before := false
	for _, v := range vals {
		if !v.known {
			return nil, false
		}
		if v.pos < pos {
			before = true
		}
	}
	// Without an assignment first, the value comes from the environment.
	return vals, before
}

// numericSpecial are the variables bash always keeps a number in.
func numericSpecial(name string) bool {
	switch name {
	case "#", "?", "$", "!", "RANDOM", "SRANDOM", "LINENO", "SECONDS", "BASHPID", "PPID", "UID", "EUID",
		"EPOCHSECONDS":
		return true
	}
	return false
}

func isArithAssign(op syntax.BinAritOperator) bool {
	switch op {
	case syntax.Assgn, syntax.AddAssgn, syntax.SubAssgn, syntax.MulAssgn, syntax.QuoAssgn, syntax.RemAssgn,
		syntax.AndAssgn, syntax.OrAssgn, syntax.XorAssgn, syntax.ShlAssgn, syntax.ShrAssgn,
		syntax.AndBoolAssgn, syntax.OrBoolAssgn, syntax.XorBoolAssgn, syntax.PowAssgn:
		return true
	}
	return false
}

// arithTargetName is the variable an arithmetic assignment sets.
func arithTargetName(e syntax.ArithmExpr) string {
	w, ok := e.(*syntax.Word)
	if !ok || len(w.Parts) != 1 {
		return ""
	}
	switch p := w.Parts[0].(type) {
	case *syntax.Lit:
		return varName(p.Value)
	case *syntax.ParamExp:
		if p.Param != nil {
			return p.Param.Value
		}
	}
	return ""
}

// arithmeticOnly reports whether a word is one arithmetic expansion
// ("$((n + 1))"), whose value is a number.
func arithmeticOnly(w *syntax.Word) bool {
	parts := w.Parts
	if len(parts) == 1 {
		if dq, ok := parts[0].(*syntax.DblQuoted); ok {
			parts = dq.Parts
		}
	}
	if len(parts) != 1 {
		return false
	}
	_, ok := parts[0].(*syntax.ArithmExp)
	return ok
}

// literalText is the text of a word without expansions, after quote
// removal.
func literalText(w *syntax.Word) (string, bool) {
	var b strings.Builder
	if !literalParts(&b, w.Parts, false) {
		return "", false
	}
	return b.String(), true
}

func literalParts(b *strings.Builder, parts []syntax.WordPart, inDQ bool) bool {
	for _, p := range parts {
		switch x := p.(type) {
		case *syntax.Lit:
			var out word
			literal(&out, b, x.Value, inDQ)
		case *syntax.SglQuoted:
			if x.Dollar {
				return false
			}
			b.WriteString(x.Value)
		case *syntax.DblQuoted:
			if !literalParts(b, x.Parts, true) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// isNumber reports whether s is an integer constant of bash arithmetic
// ("42", "0x1f", "8#17", "-3"): evaluating it runs nothing.
func isNumber(s string) bool {
	s = strings.TrimSpace(s)
	s = strings.TrimLeft(s, "+-")
	if s == "" || s[0] < '0' || s[0] > '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isNameChar(c) && c != '#' && c != '@' {
			return false
		}
	}
	return true
}

func isName(s string) bool {
	if s == "" || !isNameStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isNameChar(s[i]) {
			return false
		}
	}
	return true
}

// arith walks an arithmetic expression.
func (c *converter) arith(s *script, e syntax.ArithmExpr) {
	switch x := e.(type) {
	case nil:
	case *syntax.BinaryArithm:
		if x.Op == syntax.Assgn {
			// The target's old value is not read; its subscript is.
			if w, ok := x.X.(*syntax.Word); ok {
				c.word(s, w)
			} else {
				c.arith(s, x.X)
			}
		} else {
			c.arith(s, x.X)
		}
		c.arith(s, x.Y)
	case *syntax.UnaryArithm:
		c.arith(s, x.X)
	case *syntax.ParenArithm:
		c.arith(s, x.X)
	case *syntax.FlagsArithm:
		c.arith(s, x.X)
	case *syntax.Word:
		c.arithWord(s, x, c.word(s, x))
	default:
		c.fail(errUnsupported)
	}
}

// arithWord checks the value of a word evaluated as arithmetic. cw is the
// word already converted (its substitutions walked).
func (c *converter) arithWord(s *script, w *syntax.Word, cw word) {
	if !cw.dynamic {
		c.arithText(s, cw.text, w)
		return
	}
	parts := w.Parts
	if len(parts) == 1 {
		if dq, ok := parts[0].(*syntax.DblQuoted); ok {
			parts = dq.Parts
		}
	}
	if len(parts) == 1 {
		switch x := parts[0].(type) {
		case *syntax.ArithmExp:
			return // already walked; its value is a number
		case *syntax.ParamExp:
			if c.paramValue(s, x) {
				return
			}
		case *syntax.CmdSubst:
			c.report(RiskUnparsed, "Arithmetic on a command's output, evaluated when the command runs")
			return
		}
	}
	c.unknownArith(cw.text)
}

func (c *converter) unknownArith(what string) {
	c.report(RiskUnparsed, "Arithmetic on a value only known when the command runs ("+what+")")
}

// paramValue checks the value of a parameter expansion used in
// arithmetic, and reports whether it could.
func (c *converter) paramValue(s *script, p *syntax.ParamExp) bool {
	if p.Param == nil || p.Excl || p.Slice != nil || p.Repl != nil || p.Names != 0 {
		return false
	}
	if p.Length {
		return true
	}
	if p.Exp != nil {
		switch p.Exp.Op {
		case syntax.DefaultUnset, syntax.DefaultUnsetOrNull, syntax.AssignUnset, syntax.AssignUnsetOrNull:
			// ${x:-3}: the variable's value or the default.
			if p.Exp.Word != nil {
				text, ok := literalText(p.Exp.Word)
				if !ok {
					return false
				}
				c.arithText(s, text, p)
			}
		default:
			return false
		}
	}
	// $x, ${x}, ${a[i]}, a[i]: the subscript was walked with the word;
	// the element's value is one of the array's values.
	c.evalVar(s, p.Param.Value, p)
	return true
}

// arithText checks text that bash evaluates as arithmetic.
func (c *converter) arithText(s *script, text string, at syntax.Node) {
	t := strings.TrimSpace(text)
	switch {
	case t == "" || isNumber(t):
		return
	case isName(t):
		c.evalVar(s, t, at)
		return
	case c.level >= maxNesting || c.vars.budget <= 0:
		c.unknownArith(text)
		return
	}
	c.vars.budget--
	e, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Arithmetic(strings.NewReader(t))
	if err != nil || lexicalDepth(t) > maxDepth {
		c.report(RiskUnparsed, "Arithmetic that could not be checked ("+text+")")
		return
	}
	sub := &converter{src: t, depth: c.depth, vars: c.vars, fn: c.fn, top: c.top, usePos: c.pos(at), level: c.level + 1}
	sub.arith(s, e)
	if sub.err != nil {
		c.report(RiskUnparsed, "Arithmetic that could not be checked ("+text+")")
	}
}

// evalVar checks the value of a variable evaluated as arithmetic.
func (c *converter) evalVar(s *script, name string, at syntax.Node) {
	if numericSpecial(name) && len(c.vars.values[name]) == 0 && !c.vars.tainted[name] {
		return
	}
	if c.vars.visiting[name] {
		// A value that names its own variable (n=n+1): every value of
		// it is already being checked.
		return
	}
	vals, ok := c.vars.lookup(name, c.pos(at))
	if !ok {
		c.unknownArith("$" + name)
		return
	}
	c.vars.visiting[name] = true
	defer delete(c.vars.visiting, name)
	for _, v := range vals {
		if !isNumber(v.text) {
			c.arithText(s, v.text, at)
		}
	}
}

// indirect checks ${!x}: the value of x names the variable to expand, and
// a subscript in that name is evaluated.
func (c *converter) indirect(p *syntax.ParamExp) {
	name := p.Param.Value
	if numericSpecial(name) {
		return // ${!#}: a positional parameter
	}
	vals, ok := c.vars.lookup(name, c.pos(p))
	if !ok {
		c.report(RiskUnparsed, "Indirect expansion of a value only known when the command runs (${!"+name+"})")
		return
	}
	for _, v := range vals {
		if !isName(v.text) && !isNumber(v.text) {
			c.report(RiskUnparsed, "Indirect expansion of a name that is evaluated ("+v.text+")")
		}
	}
}

// nameArgument checks a word a builtin reads as a variable name (unset,
// read, printf -v, [[ -v ]], declare): a subscript in it is evaluated as
// arithmetic, running any substitution in it.
func (c *converter) nameArgument(w word) {
	if evaluatedSubscript(w.text) {
		c.report(RiskUnparsed, "Array subscript evaluated when the command runs ("+w.text+")")
	}
}

// evaluatedSubscript reports whether a variable name argument ("a[i]",
// "a[$(cmd)]=1") has a subscript that is more than a number.
func evaluatedSubscript(text string) bool {
	name, rest, ok := strings.Cut(text, "[")
	if !ok || !isName(name) {
		return false
	}
	end := strings.LastIndexByte(rest, ']')
	if end < 0 {
		return false
	}
	sub := strings.TrimSpace(rest[:end])
	return sub != "@" && sub != "*" && !isNumber(sub)
}
