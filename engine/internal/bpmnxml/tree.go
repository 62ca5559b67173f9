package bpmnxml

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// Namespaces the importer reads. Elements and attributes of any other
// namespace are foreign extensions and are ignored.
const (
	nsBPMN    = "http://www.omg.org/spec/BPMN/20100524/MODEL"
	nsZeebe   = "http://camunda.org/schema/zeebe/1.0"
	nsCamunda = "http://camunda.org/schema/1.0/bpmn"
)

// maxDepth bounds element nesting. Real models nest a few dozen levels at
// most; the bound keeps hostile input from growing the walk without limit.
const maxDepth = 512

// element is one XML element with its namespace resolved: the importer reads
// the whole document into this tree first, so reference resolution can look
// anywhere in it.
type element struct {
	space, local string
	attrs        []xml.Attr
	children     []*element
	text         strings.Builder
	pos          model.Position
}

// is reports whether e is the BPMN model element with the given local name.
func (e *element) is(local string) bool { return e.space == nsBPMN && e.local == local }

// attr returns the value of an unqualified attribute (or one qualified with
// the BPMN namespace, which a few tools write), and whether it was present.
func (e *element) attr(local string) (string, bool) {
	for _, a := range e.attrs {
		if a.Name.Local == local && (a.Name.Space == "" || a.Name.Space == nsBPMN) {
			return a.Value, true
		}
	}
	return "", false
}

// get returns an unqualified attribute's value, or "".
func (e *element) get(local string) string {
	v, _ := e.attr(local)
	return v
}

// nsAttr returns the value of an attribute in namespace space.
func (e *element) nsAttr(space, local string) string {
	for _, a := range e.attrs {
		if a.Name.Space == space && a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}

// child returns the first child with the given namespace and local name.
func (e *element) child(space, local string) *element {
	for _, c := range e.children {
		if c.space == space && c.local == local {
			return c
		}
	}
	return nil
}

// content returns the element's text with surrounding white space removed.
func (e *element) content() string { return strings.TrimSpace(e.text.String()) }

// parse reads data into an element tree. A document that is not well-formed
// XML yields a Problem naming the line.
func parse(name string, data []byte) (*element, error) {
	d := xml.NewDecoder(bytes.NewReader(data))
	d.CharsetReader = charsetReader
	var root *element
	var stack []*element
	malformed := func(pos model.Position, format string, args ...any) error {
		return &model.Problem{RuleID: "FT.xml", Pos: pos,
			Rule: fmt.Sprintf("%s: malformed XML at line %d: %s", name, pos.Line, fmt.Sprintf(format, args...))}
	}
	for {
		// The decoder's position before a token is where the token
		// starts: the '<' of an element.
		line, col := d.InputPos()
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			line, col = d.InputPos()
			var se *xml.SyntaxError
			if errors.As(err, &se) {
				// Its Error names the line again: the message is enough.
				return nil, malformed(model.Position{Line: se.Line}, "%s", se.Msg)
			}
			return nil, malformed(model.Position{Line: line, Column: col}, "%v", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			pos := model.Position{Line: line, Column: col}
			if len(stack) >= maxDepth {
				return nil, malformed(pos, "elements nested deeper than %d levels", maxDepth)
			}
			e := &element{space: t.Name.Space, local: t.Name.Local, attrs: t.Attr, pos: pos}
			if len(stack) == 0 {
				if root != nil {
					return nil, malformed(pos, "more than one root element")
				}
				root = e
			} else {
				parent := stack[len(stack)-1]
				parent.children = append(parent.children, e)
			}
			stack = append(stack, e)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].text.Write(t)
			}
		}
	}
	if root == nil {
		return nil, malformed(model.Position{Line: 1, Column: 1}, "no root element")
	}
	return root, nil
}

// index returns the document's elements by id (the first element of each
// id) and their positions.
func index(root *element) (map[string]*element, map[string]model.Position) {
	elements := map[string]*element{}
	pos := map[string]model.Position{}
	var walk func(e *element)
	walk = func(e *element) {
		if id, ok := e.attr("id"); ok && id != "" {
			if _, dup := elements[id]; !dup {
				elements[id] = e
				pos[id] = e.pos
			}
		}
		for _, c := range e.children {
			walk(c)
		}
	}
	walk(root)
	return elements, pos
}
