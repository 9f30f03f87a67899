package store

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestComparisons(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	if list, err := s.ListComparisons(ctx, 0); err != nil || len(list) != 0 {
		t.Fatalf("empty store: %v, %v", list, err)
	}
	a, err := s.SaveComparison(ctx, Comparison{Title: "Q4_0 vs F16", Prompt: "김치찌개", Result: `{"models":[1]}`})
	if err != nil {
		t.Fatal(err)
	}
	if a.ID == 0 || a.Created.IsZero() || !a.Updated.Equal(a.Created) || a.Result != `{"models":[1]}` || a.Prompt != "김치찌개" {
		t.Fatalf("saved %+v", a)
	}
	time.Sleep(5 * time.Millisecond) // distinct update times order the list
	b, err := s.SaveComparison(ctx, Comparison{Title: "second", Result: `{}`})
	if err != nil {
		t.Fatal(err)
	}
	list, err := s.ListComparisons(ctx, 0)
	if err != nil || len(list) != 2 || list[0].ID != b.ID || list[1].ID != a.ID || list[0].Result != "" {
		t.Fatalf("list %+v, %v", list, err)
	}
	if one, err := s.ListComparisons(ctx, 1); err != nil || len(one) != 1 {
		t.Fatalf("limit 1: %v, %v", one, err)
	}

	time.Sleep(5 * time.Millisecond)
	a.Title, a.Result = "renamed", `{"models":[2]}`
	a2, err := s.SaveComparison(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if a2.ID != a.ID || a2.Title != "renamed" || a2.Result != `{"models":[2]}` || !a2.Created.Equal(a.Created) || !a2.Updated.After(a.Created) {
		t.Fatalf("updated %+v", a2)
	}
	if list, _ := s.ListComparisons(ctx, 0); list[0].ID != a.ID {
		t.Errorf("updated comparison not first: %+v", list)
	}

	if err := s.DeleteComparison(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{
		s.DeleteComparison(ctx, a.ID),
		func() error { _, err := s.Comparison(ctx, a.ID); return err }(),
		func() error { _, err := s.SaveComparison(ctx, a); return err }(),
	} {
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("after delete: %v, want ErrNotFound", err)
		}
	}
	if got, err := s.Comparison(ctx, b.ID); err != nil || got.Title != "second" {
		t.Errorf("other comparison: %+v, %v", got, err)
	}
}
