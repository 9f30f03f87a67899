package session

import (
	"maps"

	"github.com/churon/churon/engine"
)

// ModelInfo describes the loaded model: the session's own copy of what
// the engine reports, so that front ends never import the engine.
type ModelInfo struct {
	Path          string
	Name          string // general.name, or the file name
	Architecture  string
	Parameters    int64
	FileType      string         // e.g. "Q4_K_M"
	QuantMix      map[string]int // tensors per type
	ContextLength int            // trained context length
	Layers        int
	HasTemplate   bool // the file carries a chat template
	FileBytes     int64
	WeightBytes   int64
	// Backend says what runs where ("CPU avx2 (8 threads)", or each
	// device with its share of the model); Threads are the CPU's.
	Backend string
	Threads int
	// Accelerator is the device layers run on besides the CPU ("" for
	// none); OffloadedLayers of Layers run there, and the output head
	// when OffloadedOutput.
	Accelerator     string
	OffloadedLayers int
	OffloadedOutput bool
	// DeviceNotes says, a line each, why a backend is not used.
	DeviceNotes []string
}

func modelInfo(in engine.Info) ModelInfo {
	return ModelInfo{
		Path: in.Path, Name: in.Name, Architecture: in.Architecture, Parameters: in.Parameters,
		FileType: in.FileType, QuantMix: maps.Clone(in.QuantMix), ContextLength: in.ContextLength,
		Layers: in.Layers, HasTemplate: in.HasTemplate, FileBytes: in.FileBytes, WeightBytes: in.WeightBytes,
		Backend: in.Backend, Threads: in.Threads, Accelerator: in.Accelerator,
		OffloadedLayers: in.OffloadedLayers, OffloadedOutput: in.OffloadedOutput,
		DeviceNotes: append([]string(nil), in.DeviceNotes...),
	}
}
