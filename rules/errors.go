package rules

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// ErrCompile is wrapped by every error that Load returns for a criteria file that does not compile.
var ErrCompile = errors.New("criteria do not compile")

// Problem is one error an author must fix, placed in the criteria file.
type Problem struct {
	File string `json:"file"`
	// Line and Column are 1-based; 0 when the position is unknown.
	Line    int    `json:"line"`
	Column  int    `json:"column"`
	Path    string `json:"path,omitempty"`
	Message string `json:"message"`
	// Snippet is the source line and a caret under Column.
	Snippet string `json:"snippet,omitempty"`
}

// String renders "file:line:col: message (at path)" followed by the snippet.
func (p Problem) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:%d:%d: %s", p.File, p.Line, p.Column, p.Message)
	if p.Path != "" {
		fmt.Fprintf(&b, " (at %s)", p.Path)
	}
	if p.Snippet != "" {
		b.WriteString("\n")
		b.WriteString(p.Snippet)
	}
	return b.String()
}

// ProblemList is every problem found in one load, sorted by position. It is an error.
type ProblemList []Problem

// Error renders every problem, one block each.
func (l ProblemList) Error() string {
	parts := make([]string, len(l))
	for i, p := range l {
		parts[i] = p.String()
	}
	return strings.Join(parts, "\n")
}

// Unwrap lets errors.Is(err, ErrCompile) hold.
func (l ProblemList) Unwrap() error { return ErrCompile }

// JSON renders the problems as a JSON array.
func (l ProblemList) JSON() []byte {
	b, _ := json.MarshalIndent([]Problem(l), "", "  ")
	return b
}

// problems collects problems for one file and resolves positions to snippets.
type problems struct {
	file  string
	lines []string
	list  []Problem
}

func newProblems(file string, src []byte) *problems {
	return &problems{file: file, lines: strings.Split(string(src), "\n")}
}

func (ps *problems) add(line, col int, path, format string, args ...any) {
	p := Problem{File: ps.file, Line: line, Column: col, Path: path, Message: fmt.Sprintf(format, args...)}
	if line >= 1 && line <= len(ps.lines) {
		src := strings.TrimRight(ps.lines[line-1], "\r")
		caret := ""
		if col >= 1 {
			// Keep tabs so the caret lines up in a terminal.
			pad := []rune(src)
			if col-1 <= len(pad) {
				pad = pad[:col-1]
			}
			for i, r := range pad {
				if r != '\t' {
					pad[i] = ' '
				}
			}
			caret = "\n " + string(pad) + "^"
		}
		p.Snippet = " " + src + caret
	}
	ps.list = append(ps.list, p)
}

func (ps *problems) err() error {
	if len(ps.list) == 0 {
		return nil
	}
	seen := map[string]bool{}
	out := ProblemList{}
	for _, p := range ps.list {
		k := fmt.Sprintf("%d:%d:%s:%s", p.Line, p.Column, p.Path, p.Message)
		if !seen[k] {
			seen[k] = true
			out = append(out, p)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Line != out[j].Line {
			return out[i].Line < out[j].Line
		}
		return out[i].Column < out[j].Column
	})
	return out
}

func jsonString(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}
