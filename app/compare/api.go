package compare

import api "github.com/churon/churon/app/api/compare"

// The comparison's types, events and errors are defined in
// app/api/compare, which front ends import without the engine; this
// package's code and its callers use them under the names below.

type (
	ChartOptions    = api.ChartOptions
	VocabError      = api.VocabError
	Event           = api.Event
	Planned         = api.Planned
	ModelLoading    = api.ModelLoading
	ModelLoaded     = api.ModelLoaded
	PromptReady     = api.PromptReady
	Token           = api.Token
	Generated       = api.Generated
	Evaluating      = api.Evaluating
	QualityReady    = api.QualityReady
	ModelDone       = api.ModelDone
	Done            = api.Done
	Handle          = api.Handle
	Options         = api.Options
	Probe           = api.Probe
	QuantizeOptions = api.QuantizeOptions
	QuantizeReport  = api.QuantizeReport
	Result          = api.Result
	TextTokens      = api.TextTokens
	Sampling        = api.Sampling
	ModelResult     = api.ModelResult
	Quality         = api.Quality
	Summary         = api.Summary
	Segment         = api.Segment
	Disagreement    = api.Disagreement
)

const (
	DefaultTextTokens = api.DefaultTextTokens
	FormatVersion     = api.FormatVersion
	RSSStatm          = api.RSSStatm
	RSSEstimate       = api.RSSEstimate
)

var (
	ErrModelCount    = api.ErrModelCount
	ErrReference     = api.ErrReference
	ErrVocabMismatch = api.ErrVocabMismatch
	ErrBadLogits     = api.ErrBadLogits
	ErrEmptyPrompt   = api.ErrEmptyPrompt
	ErrOption        = api.ErrOption
	Texts            = api.Texts
	Color            = api.Color
	Chart            = api.Chart
	WriteChartPNG    = api.WriteChartPNG
	Decode           = api.Decode
	WriteTable       = api.WriteTable
	WriteMarkdown    = api.WriteMarkdown
	ExportMarkdown   = api.ExportMarkdown
	ExportPNG        = api.ExportPNG
	ExportHTML       = api.ExportHTML
	WriteHTML        = api.WriteHTML
)

// Comparing across engines (app/api/compare/cross.go).
type (
	CrossOptions = api.CrossOptions
	CrossColumn  = api.CrossColumn
	CrossResult  = api.CrossResult
)
