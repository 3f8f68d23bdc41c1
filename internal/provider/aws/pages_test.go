package aws

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// fakePaginator serves pages of ints and fails at page failAt (-1: never).
type fakePaginator struct {
	pages  [][]int
	next   int
	failAt int
}

type fakeOptions struct{}

func (p *fakePaginator) HasMorePages() bool { return p.next < len(p.pages) }

func (p *fakePaginator) NextPage(context.Context, ...func(*fakeOptions)) (*[]int, error) {
	if p.next == p.failAt {
		return nil, errors.New("boom")
	}
	p.next++
	return &p.pages[p.next-1], nil
}

func TestEachPage(t *testing.T) {
	p := &fakePaginator{pages: [][]int{{1, 2}, {}, {3}}, failAt: -1}
	var got []int
	if err := EachPage(context.Background(), p.HasMorePages, p.NextPage, func(page *[]int) { got = append(got, *page...) }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []int{1, 2, 3}) {
		t.Fatalf("EachPage read %v, want [1 2 3]", got)
	}

	p = &fakePaginator{pages: [][]int{{1}, {2}, {3}}, failAt: 1}
	got = nil
	err := EachPage(context.Background(), p.HasMorePages, p.NextPage, func(page *[]int) { got = append(got, *page...) })
	if err == nil || err.Error() != "boom" || !slices.Equal(got, []int{1}) {
		t.Fatalf("EachPage = %v after %v, want boom after [1]", err, got)
	}
}
