package compare

import "time"

// Event is something a running comparison reports: one of the types
// below, in this order for each model (the reference first):
//
//	Planned                                 once, after the files are checked
//	ModelLoading → ModelLoaded              the model is in memory
//	PromptReady                             once, after the reference loaded
//	Token…                                  the answer streams
//	Generated                               its speed figures and output
//	Evaluating…                             teacher-forced scoring progress
//	QualityReady                            its quality figures
//	ModelDone                               unloaded; its final ModelResult
//	Done                                    last: the Result, or the error
//
// Switch on the concrete type. Model is always the index into
// Options.Models (and Result.Models), whatever order the models run in.
// Events share slices with the Result: read them, do not modify them.
type Event interface{ event() }

// Planned: the files were read, the vocabularies match and the reference
// is chosen. Models carries what the headers say (sizes, bits per
// weight), so columns can be drawn before any model loads.
type Planned struct {
	Models    []Probe
	Reference int
	Order     []int // the order the models will run in
}

// ModelLoading: model Model starts loading (Step of Steps in run order,
// from 1).
type ModelLoading struct {
	Model       int
	Path        string
	Step, Steps int
}

// ModelLoaded: the model is ready, on Backend with Threads threads.
type ModelLoaded struct {
	Model   int
	Load    time.Duration
	Backend string
	Threads int
}

// PromptReady: the prompt every model gets, rendered by the reference.
type PromptReady struct {
	Template string // "chat" or "raw"
	Text     string
	Tokens   []int32
}

// Token is answer text from model Model: only whole UTF-8. ID is the
// token (-1 for text held back until the end); N the tokens so far.
type Token struct {
	Model   int
	ID      int32
	Text    string
	N       int
	Elapsed time.Duration // since the model's generation started
}

// Generated: model Model finished its answer. Result has the speed and
// memory figures and the output; its Quality is not computed yet.
type Generated struct {
	Model  int
	Result ModelResult
}

// Evaluating reports scoring progress: Done of Total positions.
type Evaluating struct {
	Model       int
	Done, Total int
}

// QualityReady: model Model's quality figures against the reference.
type QualityReady struct {
	Model   int
	Quality Quality
}

// ModelDone: the model is unloaded; Result is final.
type ModelDone struct {
	Model  int
	Result ModelResult
}

// Done is the last event: the comparison's Result, or why it failed (a
// cancelled run ends with ctx's error).
type Done struct {
	Result *Result
	Err    error
}

func (Planned) event()      {}
func (ModelLoading) event() {}
func (ModelLoaded) event()  {}
func (PromptReady) event()  {}
func (Token) event()        {}
func (Generated) event()    {}
func (Evaluating) event()   {}
func (QualityReady) event() {}
func (ModelDone) event()    {}
func (Done) event()         {}
