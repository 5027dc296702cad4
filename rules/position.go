package rules

import (
	"strings"

	"go.yaml.in/yaml/v3"
)

// exprLocator maps a rune offset inside an expression's text to its line and column in the
// criteria file. YAML folds and unquotes scalars, so the text an author sees is split over source
// lines; the locator rebuilds that split and falls back to the start of the value when the text
// cannot be matched (an escape inside a quoted scalar, for example).
type exprLocator struct {
	segments []segment // pieces of the text, each on one source line
}

type segment struct {
	offset int // rune offset of the piece inside the expression text
	line   int // 1-based source line
	col    int // 1-based source column of the piece's first rune
	length int // runes
}

func newExprLocator(e Expr, lines []string) exprLocator {
	text := []rune(e.Text)
	var segs []segment
	switch e.Style {
	case yaml.LiteralStyle, yaml.FoldedStyle:
		// Content starts on the line after the indicator, indented.
		off := 0
		for ln := e.Line + 1; ln <= len(lines) && off < len(text); ln++ {
			src := lines[ln-1]
			trimmed := strings.TrimLeft(src, " ")
			if trimmed == "" {
				off++ // a blank line is a newline in the value
				continue
			}
			indent := len([]rune(src)) - len([]rune(trimmed))
			r := []rune(strings.TrimRight(trimmed, "\r"))
			if off+len(r) > len(text) || string(text[off:off+len(r)]) != string(r) {
				return exprLocator{segments: []segment{{0, e.Line, e.Column, len(text)}}}
			}
			segs = append(segs, segment{off, ln, indent + 1, len(r)})
			off += len(r) + 1 // the newline or folding space
		}
	default:
		quote := 0
		if e.Style == yaml.DoubleQuotedStyle || e.Style == yaml.SingleQuotedStyle {
			quote = 1
		}
		off := 0
		for ln := e.Line; ln <= len(lines) && off < len(text); ln++ {
			src := []rune(lines[ln-1])
			start := 0
			if ln == e.Line {
				start = e.Column - 1 + quote
			} else {
				for start < len(src) && src[start] == ' ' {
					start++
				}
			}
			if start > len(src) {
				break
			}
			piece := src[start:]
			n := len(piece)
			if n > len(text)-off {
				n = len(text) - off
			}
			if string(text[off:off+n]) != string(piece[:n]) {
				return exprLocator{segments: []segment{{0, e.Line, e.Column, len(text)}}}
			}
			segs = append(segs, segment{off, ln, start + 1, n})
			off += n + 1
		}
	}
	if len(segs) == 0 {
		segs = []segment{{0, e.Line, e.Column, len(text)}}
	}
	return exprLocator{segments: segs}
}

// at returns the source line and column of a rune offset in the expression text.
func (l exprLocator) at(offset int) (line, col int) {
	s := l.segments[0]
	for _, seg := range l.segments {
		if offset >= seg.offset {
			s = seg
		}
	}
	return s.line, s.col + offset - s.offset
}

// runeOffset converts a CEL location (1-based line, 0-based column, in runes) into a rune offset
// of the expression text.
func runeOffset(text string, line, col int) int {
	off := 0
	for i, l := range strings.Split(text, "\n") {
		if i == line-1 {
			return off + col
		}
		off += len([]rune(l)) + 1
	}
	return off
}
