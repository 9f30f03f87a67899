package models

import (
	"context"

	"github.com/churon/churon/assets/catalog"
	"github.com/churon/churon/models/fit"
)

// ReadMemory measures the machine's memory again (the fit verdicts use
// the last figure).
func (s *Service) ReadMemory() {
	mem, err := s.opt.Memory()
	s.memMu.Lock()
	s.mem, s.memErr = mem, err
	s.memMu.Unlock()
}

// Memory is the last figure ReadMemory took; Total is 0 when unknown.
func (s *Service) Memory() fit.Memory {
	s.memMu.Lock()
	defer s.memMu.Unlock()
	if s.memErr != nil {
		return fit.Memory{}
	}
	return s.mem
}

// CatalogMeta is what a catalog entry says of its model, in the shape the
// fit check reads from a GGUF header.
func CatalogMeta(m catalog.Model) fit.Meta {
	return fit.Meta{Name: m.Name, Architecture: m.Architecture, Quant: m.Quant, Parameters: m.Parameters,
		ContextLength: m.Context, Layers: m.Layers, Embedding: m.Embedding, Heads: m.Heads, KVHeads: m.KVHeads,
		HeadDimK: m.HeadDim, HeadDimV: m.HeadDim, SlidingWindow: m.SlidingWindow, WindowLayers: m.WindowLayers,
		RecurrentLayers: m.RecurrentLayers, StateBytes: m.StateBytes, HasTemplate: true, WeightBytes: m.Size, FileBytes: m.Size}
}

// Check is the fit verdict for a model on this machine, at the context
// the app opens by default.
func (s *Service) Check(meta fit.Meta) fit.Result {
	return fit.Check(fit.EstimateMemory(meta, 0), s.Memory())
}

// Recommend picks the catalog model to offer a new user: the first of
// the catalog's recommendations that the engine runs and that fits; when
// none fits comfortably, the first that fits tightly; with the memory
// unknown, the first the engine runs.
func (s *Service) Recommend() (catalog.Model, fit.Result, bool) {
	for _, want := range []fit.Verdict{fit.Fits, fit.Tight} {
		var res fit.Result
		m, ok := s.cat.Recommend(func(m catalog.Model) bool {
			if !m.Verified || !s.Supported(m.Architecture) {
				return false
			}
			res = s.Check(CatalogMeta(m))
			return res.Verdict == want
		})
		if ok {
			return m, res, true
		}
	}
	if s.Memory().Total <= 0 {
		var res fit.Result
		m, ok := s.cat.Recommend(func(m catalog.Model) bool {
			res = s.Check(CatalogMeta(m))
			return m.Verified && s.Supported(m.Architecture)
		})
		return m, res, ok
	}
	return catalog.Model{}, fit.Result{}, false
}

// RemoteMeta reads the header of a file on the hub (only the header, not
// the weights) for the exact fit estimate; fetched says how many bytes
// that took. It blocks: front ends call it off their drawing goroutine.
func (s *Service) RemoteMeta(ctx context.Context, repo, rev, file string) (meta fit.Meta, fetched int64, err error) {
	hc := s.Hub()
	return s.opt.Headers.Remote(ctx, hc.ResolveURL(repo, rev, file), hc.Authorize)
}
