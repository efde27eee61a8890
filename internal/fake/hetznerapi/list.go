package hetznerapi

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Pagination is meta.pagination of list answers (reference §2.3).
type Pagination struct {
	Page         int  `json:"page"`
	PerPage      int  `json:"per_page"`
	PreviousPage *int `json:"previous_page"`
	NextPage     *int `json:"next_page"`
	LastPage     *int `json:"last_page"`
	TotalEntries *int `json:"total_entries"`
}

// Meta is the meta object of list answers.
type Meta struct {
	Pagination Pagination `json:"pagination"`
}

const defaultPerPage = 25

// Per-endpoint maxima of per_page.
const (
	maxPerPage      = 50
	maxPerPageRRSet = 100
)

func intPtr(i int) *int { return &i }

// pageParams reads page and per_page.
func (s *Server) pageParams(c *call, max int) (page, per int, e *apiError) {
	page, per = 1, defaultPerPage
	if v := c.q.Get("page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return 0, 0, invalidField("page", "must be a positive integer")
		}
		page = n
	}
	if v := c.q.Get("per_page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return 0, 0, invalidField("per_page", "must be a positive integer")
		}
		per = n
	}
	if per > max {
		if s.opts.RejectPerPageOverMax {
			return 0, 0, invalidField("per_page", fmt.Sprintf("must be at most %d", max))
		}
		per = max
	}
	return page, per, nil
}

// paginate cuts items to the requested page, sets the Link header and
// returns the page and its meta.
func paginate[T any](s *Server, c *call, items []T, max int) ([]T, Meta, *apiError) {
	page, per, e := s.pageParams(c, max)
	if e != nil {
		return nil, Meta{}, e
	}
	total := len(items)
	last := max1((total + per - 1) / per)
	p := Pagination{Page: page, PerPage: per, LastPage: intPtr(last), TotalEntries: intPtr(total)}
	if page > 1 {
		p.PreviousPage = intPtr(min(page-1, last))
	}
	if page < last {
		p.NextPage = intPtr(page + 1)
	}
	setLink(c, p)
	lo := min((page-1)*per, total)
	hi := min(lo+per, total)
	out := slices.Clone(items[lo:hi])
	if out == nil {
		out = []T{}
	}
	return out, Meta{Pagination: p}, nil
}

func max1(n int) int { return max(n, 1) }

// setLink writes the Link header with prev, next and last URLs.
func setLink(c *call, p Pagination) {
	var links []string
	add := func(rel string, page *int) {
		if page == nil {
			return
		}
		q, _ := url.ParseQuery(c.r.URL.RawQuery)
		q.Set("page", strconv.Itoa(*page))
		u := url.URL{Scheme: "http", Host: c.r.Host, Path: c.r.URL.Path, RawPath: c.r.URL.RawPath,
			RawQuery: q.Encode()}
		links = append(links, fmt.Sprintf("<%s>; rel=%q", u.String(), rel))
	}
	add("prev", p.PreviousPage)
	add("next", p.NextPage)
	add("last", p.LastPage)
	if len(links) > 0 {
		c.w.Header().Set("Link", strings.Join(links, ", "))
	}
}

// sortKey is one parsed sort=field[:asc|:desc].
type sortKey struct {
	field string
	desc  bool
}

// parseSort reads the repeated sort parameter; a comma list is one
// (unknown) field, as the API takes repeated keys only (reference §2.5).
func parseSort(c *call, allowed []string) ([]sortKey, *apiError) {
	var keys []sortKey
	for _, v := range c.q["sort"] {
		f, dir, hasDir := strings.Cut(v, ":")
		if !slices.Contains(allowed, f) || (hasDir && dir != "asc" && dir != "desc") {
			return nil, invalidField("sort", "invalid sort "+quoteShort(v))
		}
		keys = append(keys, sortKey{field: f, desc: dir == "desc"})
	}
	return keys, nil
}

// sortItems orders items by keys, then by tie (ascending).
func sortItems[T any](items []T, keys []sortKey, cmp func(a, b T, field string) int, tie string) {
	slices.SortStableFunc(items, func(a, b T) int {
		for _, k := range keys {
			if r := cmp(a, b, k.field); r != 0 {
				if k.desc {
					return -r
				}
				return r
			}
		}
		return cmp(a, b, tie)
	})
}

// selectorParam parses label_selector.
func selectorParam(c *call) (Selector, *apiError) {
	sel, err := ParseSelector(c.q.Get("label_selector"))
	if err != nil {
		return nil, invalidField("label_selector", err.Error())
	}
	return sel, nil
}
