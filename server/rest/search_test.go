package rest

import (
	"encoding/json"
	"testing"
)

type row struct {
	Key   string  `json:"key"`
	Name  string  `json:"name"`
	N     int     `json:"n"`
	Flag  bool    `json:"flag"`
	Maybe *string `json:"maybe"`
}

func keysOfResult(t *testing.T, res *SearchQueryResult) []string {
	t.Helper()
	var out []string
	for _, it := range res.Items {
		out = append(out, it.(row).Key)
	}
	return out
}

func TestSearchable_FilterSortPage(t *testing.T) {
	x := "x"
	rows := []row{
		{Key: "10", Name: "order-a", N: 3, Flag: true},
		{Key: "9", Name: "order-b", N: 1, Maybe: &x},
		{Key: "100", Name: "invoice", N: 2},
		{Key: "2251799813685249", Name: "order-c", N: 5, Flag: true},
	}
	s, err := newSearchable(rows)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		query string
		want  []string
	}{
		{"default sort by key, keys by value", `{}`, []string{"9", "10", "100", "2251799813685249"}},
		{"exact", `{"filter":{"name":"invoice"}}`, []string{"100"}},
		{"exact key", `{"filter":{"key":"10"}}`, []string{"10"}},
		{"$like", `{"filter":{"name":{"$like":"order-*"}}}`, []string{"9", "10", "2251799813685249"}},
		{"$in and $neq", `{"filter":{"key":{"$in":["9","10","100"],"$neq":"10"}}}`, []string{"9", "100"}},
		{"$gte $lt", `{"filter":{"n":{"$gte":2,"$lt":5}}}`, []string{"10", "100"}},
		{"$exists", `{"filter":{"maybe":{"$exists":true}}}`, []string{"9"}},
		{"bool", `{"filter":{"flag":true}}`, []string{"10", "2251799813685249"}},
		{"$or", `{"filter":{"$or":[{"name":"invoice"},{"n":1}]}}`, []string{"9", "100"}},
		{"sort desc", `{"sort":[{"field":"n","order":"DESC"}]}`, []string{"2251799813685249", "10", "100", "9"}},
		{"sort two fields", `{"sort":[{"field":"flag"},{"field":"n","order":"DESC"}]}`, []string{"100", "9", "2251799813685249", "10"}},
		{"from and limit", `{"page":{"from":1,"limit":2}}`, []string{"10", "100"}},
		{"limit 0", `{"page":{"limit":0}}`, nil},
	}
	for _, c := range cases {
		var q SearchQuery
		if err := json.Unmarshal([]byte(c.query), &q); err != nil {
			t.Fatal(err)
		}
		res, err := s.run(q, searchOptions{defaultSort: "key"})
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		got := keysOfResult(t, res)
		if len(got) != len(c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s: got %v, want %v", c.name, got, c.want)
				break
			}
		}
	}
}

func TestSearchable_Cursors(t *testing.T) {
	var rows []row
	for _, k := range []string{"1", "2", "3", "4", "5"} {
		rows = append(rows, row{Key: k})
	}
	s, err := newSearchable(rows)
	if err != nil {
		t.Fatal(err)
	}
	two := 2
	first, err := s.run(SearchQuery{Page: &SearchPage{Limit: &two}}, searchOptions{defaultSort: "key"})
	if err != nil {
		t.Fatal(err)
	}
	if first.Page.TotalItems != 5 || first.Page.EndCursor == nil {
		t.Fatalf("first page: %+v", first.Page)
	}
	next, err := s.run(SearchQuery{Page: &SearchPage{Limit: &two, After: *first.Page.EndCursor}}, searchOptions{defaultSort: "key"})
	if err != nil {
		t.Fatal(err)
	}
	if got := keysOfResult(t, next); len(got) != 2 || got[0] != "3" || got[1] != "4" {
		t.Fatalf("after the first page: %v", got)
	}
	back, err := s.run(SearchQuery{Page: &SearchPage{Limit: &two, Before: *next.Page.StartCursor}}, searchOptions{defaultSort: "key"})
	if err != nil {
		t.Fatal(err)
	}
	if got := keysOfResult(t, back); len(got) != 2 || got[0] != "1" || got[1] != "2" {
		t.Fatalf("before the second page: %v", got)
	}
	if _, err := s.run(SearchQuery{Page: &SearchPage{After: "not a cursor"}}, searchOptions{}); err == nil {
		t.Fatal("a bad cursor was accepted")
	}
	for _, bad := range []string{`{"filter":{"nope":1}}`, `{"sort":[{"field":"nope"}]}`, `{"sort":[{"field":"key","order":"UP"}]}`, `{"filter":{"n":{"$near":1}}}`} {
		var q SearchQuery
		_ = json.Unmarshal([]byte(bad), &q)
		if _, err := s.run(q, searchOptions{}); err == nil {
			t.Errorf("%s was accepted", bad)
		}
	}
}
