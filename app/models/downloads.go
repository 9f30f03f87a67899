package models

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/churon/churon/assets/catalog"
	"github.com/churon/churon/models/download"
	"github.com/churon/churon/models/hub"
	"github.com/churon/churon/models/library"
)

// Pull is one file to download and what the library records of where it
// came from.
type Pull struct {
	Request download.Request
	Origin  library.Origin
}

// Resolve lists a repository's GGUF files at rev and picks the variant
// want names (a quantization such as "Q4_K_M", a file name, or "" for the
// hub's usual choice). Incomplete multi-file variants are refused.
func (s *Service) Resolve(ctx context.Context, repo, rev, want string) (hub.Variant, error) {
	files, err := s.Hub().Files(ctx, repo, rev)
	if err != nil {
		return hub.Variant{}, err
	}
	vs := hub.Variants(files)
	v, ok := hub.Pick(vs, want)
	if !ok {
		e := &NoVariantError{Repo: repo, Want: want}
		for _, v := range vs {
			e.Have = append(e.Have, v.Quant+" ("+path.Base(v.Files[0].Path)+")")
		}
		return hub.Variant{}, e
	}
	if !v.Complete || len(v.Files) == 0 {
		return hub.Variant{}, &IncompleteError{Repo: repo, Name: v.Name}
	}
	return v, nil
}

// Plan is the downloads of every part of a variant, first part first,
// each kept where Dest says.
func (s *Service) Plan(repo, rev string, v hub.Variant) []Pull {
	var out []Pull
	for i, f := range v.Files {
		label := path.Base(f.Path)
		if len(v.Files) > 1 {
			label = s.opt.PartLabel(v.Name, i+1, len(v.Files))
		}
		out = append(out, Pull{
			Request: download.Request{URL: s.Hub().ResolveURL(repo, rev, f.Path), Dest: s.Dest(repo, f.Path), SHA256: f.SHA256, Size: f.Size, Label: label},
			Origin:  library.Origin{Repo: repo, Revision: rev, File: f.Path, SHA256: f.SHA256},
		})
	}
	return out
}

// PlanURL is the download of a file given by its http(s) URL, kept in the
// library folder under its own name; sum, when set, is its SHA-256.
func (s *Service) PlanURL(rawURL, sum string) (Pull, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || path.Base(u.Path) == "" || path.Base(u.Path) == "/" {
		return Pull{}, fmt.Errorf("models: %q is not an http(s) URL ending in a file name", rawURL)
	}
	name := path.Base(u.Path)
	return Pull{
		Request: download.Request{URL: rawURL, Dest: Dest(s.opt.Dir, "", name), SHA256: sum, Label: name},
		Origin:  library.Origin{URL: rawURL, File: name, SHA256: strings.ToLower(sum)},
	}, nil
}

// Fetch downloads one file now, on its own (not through the queue), and
// records its origin in the library once it is in place. watch, when set,
// runs on the caller's goroutine while the file downloads (to show its
// progress) and must return once the download has ended. Fetch returns
// when the file is in place or the download failed.
func (s *Service) Fetch(ctx context.Context, p Pull, watch func(*download.Download)) (*download.Download, error) {
	lib, err := s.library()
	if err != nil {
		return nil, err
	}
	opt := s.opt.Download
	if opt.Authorize == nil {
		opt.Authorize = s.Hub().Authorize
	}
	d := download.Start(ctx, p.Request, opt)
	if watch != nil {
		watch(d)
	}
	<-d.Done()
	if err := d.Err(); err != nil {
		return d, err
	}
	return d, lib.Record(p.Request.Dest, p.Origin)
}

// DownloadCatalog fetches a catalog model: the hub's listing gives the
// exact size, parts and SHA-256, then the files are queued. With load
// set, ModelReady asks for it to be loaded once it is in place. Pending
// events bracket the listing.
func (s *Service) DownloadCatalog(m catalog.Model, load bool) {
	s.mu.Lock()
	busy := s.pending[m.ID]
	s.pending[m.ID] = true
	s.mu.Unlock()
	if busy {
		return
	}
	s.emit(Pending{ID: m.ID, On: true})
	s.background("download", func() error {
		defer func() {
			s.mu.Lock()
			delete(s.pending, m.ID)
			s.mu.Unlock()
			s.emit(Pending{ID: m.ID})
		}()
		ctx, cancel := context.WithTimeout(s.ctx, time.Minute)
		defer cancel()
		v, err := s.Resolve(ctx, m.Repo, "main", m.File)
		var nv *NoVariantError
		if errors.As(err, &nv) {
			err = &MissingFileError{Repo: m.Repo, File: m.File}
		}
		if err != nil {
			return err
		}
		return s.queue(s.Plan(m.Repo, "main", v), load)
	})
}

// IsPending reports whether catalog model id's file list is being
// fetched.
func (s *Service) IsPending(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pending[id]
}

// QueueVariant queues every part of a variant found on the hub (the
// search results of the Models page).
func (s *Service) QueueVariant(repo, rev string, v hub.Variant, load bool) {
	s.background("download", func() error {
		if !v.Complete || len(v.Files) == 0 {
			return &IncompleteError{Repo: repo, Name: v.Name}
		}
		return s.queue(s.Plan(repo, rev, v), load)
	})
}

// queue adds the parts of one model to the download queue. The origin of
// each file is recorded first, so that a download resumed after a
// restart still knows where it came from.
func (s *Service) queue(parts []Pull, load bool) error {
	lib, err := s.library()
	if err != nil {
		return err
	}
	// Every part is pending until its own DownloadEnded has gone out, so
	// ModelReady always follows the last of them.
	j := &job{load: load, pending: map[string]bool{}}
	for _, p := range parts {
		j.group = append(j.group, p.Request.Dest)
		j.pending[p.Request.Dest] = true
	}
	for _, p := range parts {
		if _, err := os.Stat(p.Request.Dest); errors.Is(err, os.ErrNotExist) {
			if err := lib.Record(p.Request.Dest, p.Origin); err != nil {
				return err
			}
		}
		s.mu.Lock()
		mgr := s.mgr
		s.mu.Unlock()
		d, err := mgr.Add(p.Request)
		if err != nil {
			return err
		}
		s.mu.Lock()
		s.jobs[p.Request.Dest] = append(s.jobs[p.Request.Dest], j)
		s.watchLocked(d)
		if s.ended[d] {
			// It ended (and said so) before this job asked for it.
			delete(j.pending, p.Request.Dest)
		}
		s.mu.Unlock()
	}
	s.wake()
	s.emit(DownloadsChanged{})
	// Parts already complete (a model downloaded before) end at once.
	s.ready(j)
	return nil
}

// watchLocked arranges for the service to hear when d ends. s.mu is held.
func (s *Service) watchLocked(d *download.Download) {
	if s.watched[d] {
		return
	}
	s.watched[d] = true
	lib := s.lib
	d.OnDone(func(d *download.Download) {
		req := d.Request()
		if d.Status() == download.Canceled {
			// The origin was recorded when the download was queued; a
			// cancelled one leaves no file, so forget it.
			if _, err := os.Stat(req.Dest); errors.Is(err, os.ErrNotExist) {
				lib.Delete(library.Model{Path: req.Dest})
			}
		}
		s.emit(DownloadEnded{Dest: req.Dest, Label: req.Label, Status: d.Status(), Err: d.Err()})
		if d.Status() == download.Completed {
			s.mu.Lock()
			s.ended[d] = true
			jobs := slices.Clone(s.jobs[req.Dest])
			for _, j := range jobs {
				delete(j.pending, req.Dest)
			}
			s.mu.Unlock()
			for _, j := range jobs {
				s.ready(j)
			}
			s.listLibrary()
		}
		s.emit(DownloadsChanged{})
	})
}

// ready sends ModelReady once every part of j is in place and said so
// (its DownloadEnded went out first).
func (s *Service) ready(j *job) {
	s.mu.Lock()
	waiting := len(j.pending) > 0
	s.mu.Unlock()
	if waiting {
		return
	}
	for _, f := range j.group {
		if st, err := os.Stat(f); err != nil || !st.Mode().IsRegular() {
			return
		}
	}
	s.mu.Lock()
	done := j.done
	j.done = true
	if !done {
		for _, f := range j.group { // the job is over: forget it
			s.jobs[f] = slices.DeleteFunc(s.jobs[f], func(o *job) bool { return o == j })
			if len(s.jobs[f]) == 0 {
				delete(s.jobs, f)
			}
		}
	}
	s.mu.Unlock()
	if !done {
		s.emit(ModelReady{Path: j.group[0], Load: j.load})
	}
}

// Downloads lists the queue's downloads, finished ones included until
// Forget (none before the queue is first used). It reads no disk.
func (s *Service) Downloads() []*download.Download {
	s.mu.Lock()
	mgr := s.mgr
	s.mu.Unlock()
	if mgr == nil {
		return nil
	}
	return mgr.Downloads()
}

// Active returns the unfinished download of a destination, or nil.
func (s *Service) Active(dest string) *download.Download {
	for _, d := range s.Downloads() {
		if d.Request().Dest == dest && !d.IsDone() {
			return d
		}
	}
	return nil
}

// Pause and Resume act on one download; the choice is kept in the queue
// file, so a paused download stays paused across restarts.
func (s *Service) Pause(d *download.Download) {
	s.withManager("pause", func(m *download.Manager) { m.Pause(d) })
}

// Resume: see Pause.
func (s *Service) Resume(d *download.Download) {
	s.withManager("resume", func(m *download.Manager) { m.Resume(d) })
}

// Cancel stops a download and deletes its partial data.
func (s *Service) Cancel(d *download.Download) {
	d.Cancel()
	s.wake()
}

// Forget drops the finished downloads from the list.
func (s *Service) Forget() {
	s.withManager("forget", func(m *download.Manager) { m.Forget() })
}

func (s *Service) withManager(op string, f func(*download.Manager)) {
	s.background(op, func() error {
		s.mu.Lock()
		mgr := s.mgr
		s.mu.Unlock()
		if mgr != nil {
			f(mgr)
			s.wake()
			s.emit(DownloadsChanged{})
		}
		return nil
	})
}
