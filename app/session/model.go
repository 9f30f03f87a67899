package session

import (
	"context"
	"fmt"

	api "github.com/churon/churon/app/api/session"
	"github.com/churon/churon/engine"
)

// startLoad loads path in the background; restore is the model to load
// again if it fails ("" for none).
func (m *Manager) startLoad(path, restore string) {
	ctx, cancel := context.WithCancel(context.Background())
	l := &loadJob{path: path, restore: restore, ctx: ctx, cancel: cancel}
	m.s.loading = l
	m.emit(api.ModelLoading{Path: path, Progress: 0})
	device, layers := m.gpuChoice()
	go func() {
		// The model the fallback describes: set before the model reaches
		// the scheduler, so before any pass that could fail.
		var mod *engine.Model
		mod, err := loadEngine(ctx, path, engine.LoadOptions{
			Threads: m.opt.Threads, InMemory: m.opt.InMemory,
			Device: device, GPULayers: layers, KVType: m.opt.KVType,
			Progress: func(f float64) {
				if f > 0 { // 0 was announced when the load was started
					m.emit(api.ModelLoading{Path: path, Progress: f})
				}
			},
			OnFallback: func(reason error) {
				m.emit(api.DeviceFallback{Path: path, Err: reason})
				if mod != nil {
					m.emit(api.ModelLoaded{Info: modelInfo(mod.Info(), mod.Template())})
				}
			},
		})
		m.loadDone <- loadResult{job: l, model: mod, err: err}
	}()
}

func (m *Manager) loaded(r loadResult) {
	s := &m.s
	s.loading = nil
	superseded := r.job.ctx.Err() != nil
	r.job.cancel()
	switch {
	case r.remote != nil && r.err == nil && !superseded:
		s.remote = r.remote
		s.autoCap = remoteCap
		m.emit(api.ModelLoaded{Info: r.remote.info})
		return
	case r.remote != nil && r.err == nil:
		m.emit(api.ModelUnloaded{Path: r.job.path})
		return
	case r.err != nil:
		if !superseded {
			m.emit(api.Error{Op: "load model", Err: loadError(r.job.path, r.err)})
		}
		m.emit(api.ModelUnloaded{Path: r.job.path})
		if !superseded && !s.closing && r.job.restore != "" && r.job.restore != r.job.path {
			m.startLoad(r.job.restore, "")
		}
	case superseded:
		r.model.Close()
		m.emit(api.ModelUnloaded{Path: r.job.path})
	default:
		s.model = r.model
		s.autoCap = DefaultMaxAnswers(r.model, m.opt.KVType)
		s.batch = NewBatch(r.model, BatchOptions{Prefill: m.opt.Prefill, OnStep: m.opt.OnStep})
		m.emit(api.ModelLoaded{Info: modelInfo(r.model.Info(), r.model.Template())})
	}
}

// dropModel closes the model and every cache made from it. Nothing may be
// running or being written; flushDirty has already written what it could
// (in the background: the scheduler never waits on the disk).
func (m *Manager) dropModel() {
	for id, cs := range m.s.convs {
		if cs.seq == nil {
			continue
		}
		cs.seq.Close()
		cs.seq, cs.dirty = nil, false
		if !m.s.closing {
			m.emitCache(id)
		}
	}
	if r := m.s.remote; r != nil {
		m.s.remote = nil
		m.emit(api.ModelUnloaded{Path: r.path})
	}
	if m.s.model == nil {
		return
	}
	path := m.s.model.Info().Path
	m.s.batch.Close() // idle: no answer runs
	m.s.batch = nil
	if err := m.s.model.Close(); err != nil {
		m.emit(api.Error{Op: "unload model", Err: err})
	}
	m.s.model = nil
	m.emit(api.ModelUnloaded{Path: path})
}

// LoadModel unloads the current model (stopping every answer) and loads
// the GGUF file at path in the background: ModelLoading events report
// progress, then ModelLoaded or Error+ModelUnloaded. Messages sent
// meanwhile wait for it.
//
// A file that cannot load — missing, incomplete, not GGUF, of an
// architecture the engine lacks — is refused at once, on the caller's
// goroutine and before anything is unloaded, so the model that works stays
// loaded. A load that fails later (out of memory) loads the previous model
// again.
func (m *Manager) LoadModel(path string) error {
	if api.IsRemote(path) {
		if m.opt.Remote == nil {
			return api.ErrNoRemotes
		}
		// A connection that is not there is refused before anything is
		// unloaded, as a file that cannot load is.
		conn, _, _ := api.ParseRemote(path)
		if _, err := m.opt.Remote.Engine(conn); err != nil {
			return fmt.Errorf("remote %q: %w", conn, err)
		}
		return m.changeModel(path)
	}
	if !api.IsDemo(path) {
		if err := checkModel(path); err != nil {
			return loadError(path, err)
		}
	}
	return m.changeModel(path)
}

// checkModel is engine.Check; tests replace it to let a file pass the
// check and fail the load, as running out of memory does.
var checkModel = engine.Check

// UnloadModel stops every answer and frees the model.
func (m *Manager) UnloadModel() error { return m.changeModel("") }

func (m *Manager) changeModel(path string) error {
	return m.call(func() error {
		if m.s.closing {
			return api.ErrClosed
		}
		m.requestModel(path)
		return nil
	})
}

// requestModel stops every answer and asks for path to be loaded ("" for
// none). It runs on the scheduling goroutine.
func (m *Manager) requestModel(path string) {
	m.cancelAll()
	if m.s.loading != nil {
		m.s.loading.cancel()
	}
	m.s.want = &modelRequest{path: path}
}

// Status reports what the manager is doing.
func (m *Manager) Status() (api.Status, error) {
	var st api.Status
	err := m.call(func() error {
		if m.s.model != nil {
			in := modelInfo(m.s.model.Info(), m.s.model.Template())
			st.Model = &in
		}
		if m.s.remote != nil {
			in := m.s.remote.info
			st.Model = &in
		}
		if m.s.loading != nil {
			st.Loading = m.s.loading.path
		} else if m.s.want != nil {
			st.Loading = m.s.want.path
		}
		for _, j := range m.s.active {
			if j.conv > 0 {
				st.Answering = append(st.Answering, j.conv)
			} else {
				st.Requests++
			}
		}
		if len(st.Answering) > 0 {
			st.Generating = st.Answering[0]
		}
		for _, j := range m.s.queue {
			if j.conv > 0 {
				st.Queued = append(st.Queued, j.conv)
			} else {
				st.RequestsQueued++
			}
		}
		st.MaxAnswers = m.maxAnswers()
		st.Exclusive = m.s.exclusive > 0
		return nil
	})
	return st, err
}
