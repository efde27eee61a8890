package localzone

import (
	"cmp"
	"slices"
	"strings"

	"github.com/bulwarkmcp/bulwark/servers/dns"
)

// Page sizes of the API: 25 by default, at most 50 zones or actions and
// 100 RRSets a page. A larger per_page is clamped to the maximum.
const (
	defaultPerPage  = 25
	maxPerPageZones = 50
	maxPerPageSets  = 100
)

type sortKey struct {
	field string
	desc  bool
}

// parseSort reads "field" / "field:asc" / "field:desc" values.
func parseSort(in []string, allowed ...string) ([]sortKey, *dns.Error) {
	var keys []sortKey
	for _, s := range in {
		field, dir, _ := strings.Cut(s, ":")
		if !slices.Contains(allowed, field) || (dir != "" && dir != "asc" && dir != "desc") {
			return nil, errInvalid("sort", "sort %q: want one of %s, optionally with :asc or :desc", s, strings.Join(allowed, ", "))
		}
		keys = append(keys, sortKey{field: field, desc: dir == "desc"})
	}
	return keys, nil
}

// sortBy sorts items by keys, then by the tie-breaker field.
func sortBy[T any](items []T, keys []sortKey, tie string, compare func(field string, a, b T) int) {
	keys = append(keys, sortKey{field: tie})
	slices.SortStableFunc(items, func(a, b T) int {
		for _, k := range keys {
			c := compare(k.field, a, b)
			if k.desc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return 0
	})
}

// paginate cuts one page out of items and describes it.
func paginate[T any](items []T, page, perPage, maxPerPage int) ([]T, dns.Pagination, *dns.Error) {
	lo, hi, pg, derr := pageBounds(len(items), page, perPage, maxPerPage)
	if derr != nil {
		return nil, dns.Pagination{}, derr
	}
	return slices.Clone(items[lo:hi]), pg, nil
}

// checkPage refuses a negative page or page size.
func checkPage(page, perPage int) *dns.Error {
	if page < 0 {
		return errInvalid("page", "must be at least 1")
	}
	if perPage < 0 {
		return errInvalid("per_page", "must be at least 1")
	}
	return nil
}

// pageBounds says which items [lo, hi) of total make the page, and
// describes it.
func pageBounds(total, page, perPage, maxPerPage int) (lo, hi int, pg dns.Pagination, derr *dns.Error) {
	if derr := checkPage(page, perPage); derr != nil {
		return 0, 0, dns.Pagination{}, derr
	}
	page = cmp.Or(page, 1)
	perPage = min(cmp.Or(perPage, defaultPerPage), maxPerPage)
	last := max(1, (total+perPage-1)/perPage)
	pg = dns.Pagination{Page: page, PerPage: perPage, LastPage: ptr(last), TotalEntries: ptr(total)}
	if page > 1 {
		pg.PreviousPage = ptr(min(page-1, last))
	}
	if page < last {
		pg.NextPage = ptr(page + 1)
	}
	lo = total
	if page-1 <= total/perPage {
		lo = min((page-1)*perPage, total)
	}
	hi = min(lo+perPage, total)
	return lo, hi, pg, nil
}

func ptr[T any](v T) *T { return &v }
