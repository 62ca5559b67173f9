package expr

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// tokKind classifies a token.
type tokKind uint8

const (
	tEOF tokKind = iota
	tName
	tNumber
	tString
	tOp
	// tAt is a FEEL temporal literal @"...": text is the string's value.
	tAt
)

// token is one lexeme. pos and end are byte offsets in the original
// expression text (not in the dialect body), so syntax errors point at the
// text the user wrote.
type token struct {
	kind tokKind
	text string // name, operator, number text, or the unescaped string value
	pos  int
	end  int
	// quoted is set on names written in backticks (FEEL), which are never
	// keywords.
	quoted bool
	// known is set on a name joined from the names in scope given in
	// Options.Names (dmn.go): it may span several words and symbols.
	known bool
}

// lexer splits one dialect body into tokens. It is shared by FEEL and JUEL;
// the flags say which dialect rules apply.
type lexer struct {
	src  string // the whole original text
	i    int    // current offset in src
	end  int    // body ends here (exclusive)
	feel bool   // FEEL: // and /* */ comments, backtick names, no '...' strings
	prev tokKind
	// prevText is the text of the previous operator token, used to decide
	// whether ".5" is a number.
	prevText string
}

// twoCharOps are the operators of two characters, longest match first.
var twoCharOps = []string{"**", "..", "<=", ">=", "!=", "==", "&&", "||"}

// next returns the next token, or panics with a *SyntaxError.
func (l *lexer) next() token {
	l.skipSpace()
	if l.i >= l.end {
		return token{kind: tEOF, pos: l.end, end: l.end}
	}
	start := l.i
	c := l.src[l.i]
	switch {
	case c >= '0' && c <= '9' || c == '.' && l.i+1 < l.end && isDigit(l.src[l.i+1]) && !l.afterValue():
		return l.number()
	case c == '"' || c == '\'' && !l.feel:
		return l.str(c)
	case c == '@' && l.feel && l.i+1 < l.end && l.src[l.i+1] == '"':
		l.i++
		t := l.str('"')
		t.kind, t.pos = tAt, start
		return l.emit(t)
	case c == '`' && l.feel:
		j := strings.IndexByte(l.src[l.i+1:l.end], '`')
		if j < 0 {
			panic(l.errAt(start, "unterminated `name`"))
		}
		l.i += j + 2
		if j == 0 {
			panic(l.errAt(start, "empty `name`"))
		}
		return l.emit(token{kind: tName, text: l.src[start+1 : l.i-1], pos: start, end: l.i, quoted: true})
	case isNameStart(l.runeAt()):
		// FEEL names may hold an apostrophe ("Student's name", DMN 1.5
		// additional name symbols); FEEL has no '...' strings.
		for l.i < l.end && (isNamePart(l.runeAt()) || l.feel && l.src[l.i] == '\'') {
			_, n := utf8.DecodeRuneInString(l.src[l.i:l.end])
			l.i += n
		}
		return l.emit(token{kind: tName, text: l.src[start:l.i], pos: start, end: l.i})
	}
	for _, op := range twoCharOps {
		if strings.HasPrefix(l.src[l.i:l.end], op) {
			l.i += 2
			return l.emit(token{kind: tOp, text: op, pos: start, end: l.i})
		}
	}
	if strings.IndexByte("+-*/%()[]{},.:?!<>=", c) >= 0 {
		l.i++
		return l.emit(token{kind: tOp, text: l.src[start:l.i], pos: start, end: l.i})
	}
	r := l.runeAt()
	panic(l.errAt(start, "unexpected character "+strconv.QuoteRune(r)))
}

func (l *lexer) emit(t token) token {
	l.prev = t.kind
	l.prevText = t.text
	return t
}

// afterValue reports whether the previous token ends a value, in which case
// a '.' is a path separator, not the start of a number.
func (l *lexer) afterValue() bool {
	switch l.prev {
	case tName, tNumber, tString, tAt:
		return true
	case tOp:
		return l.prevText == ")" || l.prevText == "]" || l.prevText == "}"
	}
	return false
}

func (l *lexer) runeAt() rune {
	r, _ := utf8.DecodeRuneInString(l.src[l.i:l.end])
	return r
}

func (l *lexer) skipSpace() {
	for l.i < l.end {
		c := l.src[l.i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			l.i++
		case l.feel && strings.HasPrefix(l.src[l.i:l.end], "//"):
			j := strings.IndexByte(l.src[l.i:l.end], '\n')
			if j < 0 {
				l.i = l.end
			} else {
				l.i += j + 1
			}
		case l.feel && strings.HasPrefix(l.src[l.i:l.end], "/*"):
			j := strings.Index(l.src[l.i+2:l.end], "*/")
			if j < 0 {
				panic(l.errAt(l.i, "unterminated comment"))
			}
			l.i += j + 4
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRuneInString(l.src[l.i:l.end])
			if !unicode.IsSpace(r) {
				return
			}
			l.i += n
		default:
			return
		}
	}
}

func (l *lexer) number() token {
	start := l.i
	for l.i < l.end && isDigit(l.src[l.i]) {
		l.i++
	}
	// A '.' belongs to the number only when a digit follows: "1..5" is a
	// range and "a.1" never reaches here.
	if l.i+1 < l.end && l.src[l.i] == '.' && isDigit(l.src[l.i+1]) {
		l.i++
		for l.i < l.end && isDigit(l.src[l.i]) {
			l.i++
		}
	}
	if l.i < l.end && (l.src[l.i] == 'e' || l.src[l.i] == 'E') {
		j := l.i + 1
		if j < l.end && (l.src[j] == '+' || l.src[j] == '-') {
			j++
		}
		if j < l.end && isDigit(l.src[j]) {
			l.i = j
			for l.i < l.end && isDigit(l.src[l.i]) {
				l.i++
			}
		}
	}
	if l.i < l.end && isNameStart(l.runeAt()) {
		panic(l.errAt(l.i, "unexpected "+strconv.QuoteRune(l.runeAt())+" after number"))
	}
	return l.emit(token{kind: tNumber, text: l.src[start:l.i], pos: start, end: l.i})
}

func (l *lexer) str(quote byte) token {
	start := l.i
	l.i++
	var b strings.Builder
	for {
		if l.i >= l.end {
			panic(l.errAt(start, "unterminated string"))
		}
		c := l.src[l.i]
		if c == quote {
			l.i++
			break
		}
		if c != '\\' {
			b.WriteByte(c)
			l.i++
			continue
		}
		if l.i+1 >= l.end {
			panic(l.errAt(start, "unterminated string"))
		}
		esc := l.src[l.i+1]
		switch esc {
		case '"', '\'', '\\', '/', '$', '#', '{', '}':
			b.WriteByte(esc)
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'u', 'U':
			// \uXXXX, a UTF-16 surrogate pair as two of them, or
			// \UXXXXXX (six digits, FEEL).
			n := 4
			if esc == 'U' {
				n = 6
			}
			r, ok := hexRune(l.src, l.i+2, n, l.end)
			if !ok {
				panic(l.errAt(l.i, `bad \`+string(esc)+` escape`))
			}
			if utf16.IsSurrogate(r) {
				lo, ok := rune(0), false
				if l.i+n+8 <= l.end && l.src[l.i+n+2] == '\\' && l.src[l.i+n+3] == 'u' {
					lo, ok = hexRune(l.src, l.i+n+4, 4, l.end)
				}
				if r = utf16.DecodeRune(r, lo); !ok || r == utf8.RuneError {
					panic(l.errAt(l.i, `unpaired UTF-16 surrogate in \u escape`))
				}
				l.i += 6
			}
			b.WriteRune(r)
			l.i += n
		default:
			if !l.feel {
				panic(l.errAt(l.i, "unknown escape \\"+string(esc)))
			}
			// FEEL keeps any other escape as written, as its regular
			// expressions need ("\d", "\s", "\1").
			b.WriteByte('\\')
			b.WriteByte(esc)
		}
		l.i += 2
	}
	return l.emit(token{kind: tString, text: b.String(), pos: start, end: l.i})
}

func (l *lexer) errAt(pos int, msg string) *SyntaxError {
	return &SyntaxError{Text: l.src, Pos: pos, Msg: msg}
}

// hexRune reads n hex digits at src[i:].
func hexRune(src string, i, n, end int) (rune, bool) {
	if i+n > end {
		return 0, false
	}
	v, err := strconv.ParseUint(src[i:i+n], 16, 32)
	if err != nil || v > unicode.MaxRune {
		return 0, false
	}
	return rune(v), true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isNameStart(r rune) bool {
	// DMN 1.5's name start characters include the planes above the
	// basic one (emoji among them: {🐎: "bar"}).
	return r == '_' || r == '$' || unicode.IsLetter(r) || r >= 0x10000 && r <= 0xEFFFF
}

func isNamePart(r rune) bool {
	return isNameStart(r) || unicode.IsDigit(r)
}
