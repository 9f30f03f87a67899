package session

import (
	"maps"

	"github.com/churon/churon/engine"
)

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
