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
	line         int
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
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			line, _ := d.InputPos()
			var se *xml.SyntaxError
			if errors.As(err, &se) {
				line = se.Line
			}
			return nil, &model.Problem{Rule: fmt.Sprintf("%s: malformed XML at line %d: %v", name, line, err)}
		}
		switch t := tok.(type) {
		case xml.StartElement:
			line, _ := d.InputPos()
			if len(stack) >= maxDepth {
				return nil, &model.Problem{Rule: fmt.Sprintf("%s: malformed XML at line %d: elements nested deeper than %d levels", name, line, maxDepth)}
			}
			e := &element{space: t.Name.Space, local: t.Name.Local, attrs: t.Attr, line: line}
			if len(stack) == 0 {
				if root != nil {
					return nil, &model.Problem{Rule: fmt.Sprintf("%s: malformed XML at line %d: more than one root element", name, line)}
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
		return nil, &model.Problem{Rule: fmt.Sprintf("%s: malformed XML at line 1: no root element", name)}
	}
	return root, nil
}
