package cli

import (
	"io"
	"strings"
	"unicode/utf8"
)

// cell is one column of a line of text output.
type cell struct {
	text  string
	style style
}

// c makes a cell.
func c(text string, st style) cell { return cell{text: text, style: st} }

// treeNode is one line of a tree, with detail lines printed under it and
// its children. Consecutive siblings with the same non-empty group have
// their cells aligned in columns.
type treeNode struct {
	cells    []cell
	group    string
	details  [][]cell
	children []*treeNode
}

func (n *treeNode) add(children ...*treeNode) { n.children = append(n.children, children...) }

// renderTree writes the tree rooted at root.
func renderTree(w io.Writer, root *treeNode, p palette) error {
	var b strings.Builder
	writeTreeNode(&b, root, "", "", nil, p)
	_, err := io.WriteString(w, b.String())
	return err
}

func writeTreeNode(b *strings.Builder, n *treeNode, first, rest string, widths []int, p palette) {
	writeLine(b, first, n.cells, widths, p)
	cont := "   "
	if len(n.children) > 0 {
		cont = "│  "
	}
	for _, d := range n.details {
		writeLine(b, rest+cont, d, nil, p)
	}
	groupWidths := columnWidths(n.children)
	for i, ch := range n.children {
		branch, next := "├─ ", "│  "
		if i == len(n.children)-1 {
			branch, next = "└─ ", "   "
		}
		writeTreeNode(b, ch, rest+branch, rest+next, groupWidths[i], p)
	}
}

// columnWidths returns, for each child, the widths of its columns: the
// widest cell of each column over the run of consecutive siblings of the
// same group; nil for children without a group.
func columnWidths(children []*treeNode) [][]int {
	out := make([][]int, len(children))
	for start := 0; start < len(children); {
		g := children[start].group
		end := start + 1
		for g != "" && end < len(children) && children[end].group == g {
			end++
		}
		if g != "" {
			var widths []int
			for _, ch := range children[start:end] {
				for j, cl := range ch.cells {
					if j >= len(widths) {
						widths = append(widths, 0)
					}
					widths[j] = max(widths[j], utf8.RuneCountInString(cl.text))
				}
			}
			for i := start; i < end; i++ {
				out[i] = widths
			}
		}
		start = end
	}
	return out
}

// writeLine writes prefix and the cells separated by two spaces, each
// padded to its column's width when widths are given; empty cells are left
// out unless another aligned line has something in their column.
func writeLine(b *strings.Builder, prefix string, cells []cell, widths []int, p palette) {
	parts := make([]string, 0, len(cells))
	for i, cl := range cells {
		if cl.text == "" && (widths == nil || i >= len(widths) || widths[i] == 0) {
			continue // nothing in this column on any aligned line
		}
		s := p.paint(cl.text, cl.style)
		if i < len(widths) {
			s += strings.Repeat(" ", widths[i]-utf8.RuneCountInString(cl.text))
		}
		parts = append(parts, s)
	}
	b.WriteString(strings.TrimRight(prefix+strings.Join(parts, "  "), " "))
	b.WriteByte('\n')
}
