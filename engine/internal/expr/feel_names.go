package expr

import (
	"slices"
	"strings"
	"sync"

	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// Names that contain spaces, keywords or operators ("order id", "date and
// time", "a + b", "days in weekend"). DMN 1.5's grammar allows them
// (rules 27-30 and the notes after the grammar) and leaves the
// ambiguity to the scope: a run of tokens that spells a name in scope
// is that name. The scope a FEEL expression is parsed against holds the
// iteration variables, context entries and function parameters around
// it, Options.Names (names the caller knows at compile time, as a DMN
// model's inputs and decisions), and the variables it is evaluated
// over: an expression that also parses without them (a + b as a sum) is
// parsed again, once per set of such names found among the variables
// (Program.scoped), so that a variable called "a + b" wins there, as
// the longest name in scope does.

// maxNameTokens bounds the tokens of a name with spaces or operators,
// and so the work of matching one.
const maxNameTokens = 12

// nameSymbols are the operators a name may contain between its words
// (DMN 1.5 grammar rule 30, additional name symbols).
const nameSymbols = "+-*/."

// nameTokenCache holds the token texts of names already split.
var nameTokenCache sync.Map // string -> []string

// nameTokens splits a name into the texts of its FEEL tokens ("a+b" and
// "a + b" are both a, +, b), or nil when it is one token or does not
// lex as a name.
func nameTokens(name string) (out []string) {
	if v, ok := nameTokenCache.Load(name); ok {
		return v.([]string)
	}
	defer func() {
		if recover() != nil {
			out = nil
		}
		if len(out) < 2 || len(out) > maxNameTokens {
			out = nil
		}
		nameTokenCache.Store(name, out)
	}()
	l := &lexer{src: name, end: len(name), feel: true}
	for {
		t := l.next()
		switch {
		case t.kind == tEOF:
			return out
		case t.kind == tName && !t.quoted, t.kind == tNumber && len(out) > 0,
			t.kind == tOp && len(out) > 0 && strings.Contains(nameSymbols, t.text):
			out = append(out, t.text)
		default:
			return nil
		}
	}
}

// scopeNames returns the names with several tokens in scope here: the
// bound names, innermost first, then the compile-time names.
func (c *compiler) scopeNames() []string {
	var out []string
	for k := c; k != nil; k = k.outer {
		for i := len(k.bound) - 1; i >= 0; i-- {
			if nameTokens(k.bound[i].name) != nil {
				out = append(out, k.bound[i].name)
			}
		}
	}
	root := c
	for root.outer != nil {
		root = root.outer
	}
	return append(out, root.names...)
}

// scopeName returns the longest name in scope, of two tokens or more,
// that the tokens at the cursor spell, and how many tokens it takes; 0
// when none does.
func (c *compiler) scopeName() (string, int) {
	best, bestN := "", 0
	for _, name := range c.scopeNames() {
		toks := nameTokens(name)
		if len(toks) <= bestN {
			continue
		}
		ok := true
		for j, want := range toks {
			t := c.peekAt(j)
			if t.quoted || t.text != want || t.kind != tName && t.kind != tOp && t.kind != tNumber {
				ok = false
				break
			}
		}
		if ok {
			best, bestN = name, len(toks)
		}
	}
	return best, bestN
}

// takeScopeName consumes the n tokens of a name found by scopeName and
// returns one name token spanning them.
func (c *compiler) takeScopeName(name string, n int) token {
	first := c.peek()
	last := first
	for range n {
		last = c.next()
	}
	return token{kind: tName, text: name, pos: first.pos, end: last.end}
}

// spacedCandidates returns the ways the runs of tokens of a FEEL
// expression could be written as the key of a variable with several
// tokens: every run of two to maxNameTokens tokens that starts with a
// name and ends with a name or number and holds only names, numbers and
// name symbols, as written (white space collapsed), with single spaces
// between all tokens, and with single spaces between words only.
func spacedCandidates(src string, toks []token) []string {
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for i, t := range toks {
		if t.kind != tName || t.quoted || feelKeywords[t.text] {
			continue
		}
		for j := i + 1; j < len(toks) && j-i < maxNameTokens; j++ {
			u := toks[j]
			if u.quoted || u.kind != tName && u.kind != tNumber && (u.kind != tOp || !strings.Contains(nameSymbols, u.text)) {
				break
			}
			if u.kind == tOp {
				continue
			}
			add(strings.Join(strings.Fields(src[t.pos:u.end]), " "))
			var spaced, words strings.Builder
			for k := i; k <= j; k++ {
				if k > i {
					spaced.WriteByte(' ')
					if toks[k].kind != tOp && toks[k-1].kind != tOp {
						words.WriteByte(' ')
					}
				}
				spaced.WriteString(toks[k].text)
				words.WriteString(toks[k].text)
			}
			add(spaced.String())
			add(words.String())
		}
	}
	return out
}

// count reports how many parsed programs are kept.
func (s *scopedPrograms) count() int {
	n := 0
	s.Range(func(any, any) bool { n++; return true })
	return n
}

// maxScoped bounds the programs a Program keeps parsed again for the
// sets of spaced names found among its variables; past it they are
// parsed each time.
const maxScoped = 16

// scoped returns the program to run over vars: p itself, or p parsed
// again with the names of p.spaced that vars holds in scope.
func (p *Program) scoped(vars map[string]any) (*Program, error) {
	var found []string
	for _, s := range p.spaced {
		if _, ok := vars[s]; ok {
			found = append(found, s)
		}
	}
	if found == nil {
		return p, nil
	}
	key := strings.Join(found, "\x00")
	if v, ok := p.variants.Load(key); ok {
		return v.(*Program), nil
	}
	opts := p.opts
	opts.Names = append(slices.Clip(opts.Names), found...)
	q, err := compile(p.expr, p.mode, opts, false)
	if err != nil {
		return nil, &EvalError{Text: p.text, Pos: -1, Err: err}
	}
	if p.variants.n.Add(1) <= maxScoped {
		p.variants.Store(key, q)
	}
	return q, nil
}

// feelScope sets up the names in scope of a FEEL text just lexed: the
// compile-time ones of opts and, when discover is set, the spaced
// names the text could read from its variables (kept in p with what
// parsing it again needs).
func (c *compiler) feelScope(p *Program, e model.Expression, opts Options, discover bool) {
	for _, n := range opts.Names {
		if nameTokens(n) != nil {
			c.names = append(c.names, n)
		}
	}
	if !discover {
		return
	}
	for _, s := range spacedCandidates(c.src, c.toks) {
		if !slices.Contains(opts.Names, s) {
			p.spaced = append(p.spaced, s)
		}
	}
	if p.spaced != nil {
		p.expr, p.opts, p.variants = e, opts, &scopedPrograms{}
	}
}
