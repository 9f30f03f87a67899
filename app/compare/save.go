package compare

import (
	"context"
	"encoding/json"
	"fmt"

	api "github.com/churon/churon/app/api/compare"
	"github.com/churon/churon/app/store"
)

// Save stores a finished comparison in the chat database as one JSON
// document: a new row when r.ID is 0 (r.ID is set), else it replaces the
// saved one.
func Save(ctx context.Context, st *store.Store, r *api.Result) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("compare: save: %w", err)
	}
	c, err := st.SaveComparison(ctx, store.Comparison{ID: r.ID, Title: r.Title, Prompt: r.Prompt, Result: string(b)})
	if err != nil {
		return fmt.Errorf("compare: save: %w", err)
	}
	r.ID = c.ID
	return nil
}

// Load reopens a saved comparison. The title is the store's (it may have
// been renamed there).
func Load(ctx context.Context, st *store.Store, id int64) (*api.Result, error) {
	c, err := st.Comparison(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("compare: load: %w", err)
	}
	r, err := api.Decode([]byte(c.Result))
	if err != nil {
		return nil, fmt.Errorf("compare: comparison %d: %w", id, err)
	}
	r.ID, r.Title = c.ID, c.Title
	return r, nil
}
