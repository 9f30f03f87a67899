package session

import (
	"maps"
	"strings"

	api "github.com/churon/churon/app/api/session"
	"github.com/churon/churon/engine"
	"github.com/churon/churon/engine/chat"
)

func modelInfo(in engine.Info, tmpl *chat.Template) api.ModelInfo {
	mi := api.ModelInfo{
		Path: in.Path, Name: in.Name, Architecture: in.Architecture, Parameters: in.Parameters,
		FileType: in.FileType, QuantMix: maps.Clone(in.QuantMix), ContextLength: in.ContextLength,
		Layers: in.Layers, HasTemplate: in.HasTemplate, FileBytes: in.FileBytes, WeightBytes: in.WeightBytes,
		Backend: in.Backend, Threads: in.Threads, Accelerator: in.Accelerator,
		OffloadedLayers: in.OffloadedLayers, OffloadedOutput: in.OffloadedOutput,
		DeviceNotes: append([]string(nil), in.DeviceNotes...),
	}
	switch chat.OutputFormatOf(tmpl) {
	case chat.OutputThink:
		mi.Thinks = "think"
	case chat.OutputHarmony:
		mi.Thinks = "harmony"
	}
	mi.ThinkingSwitch = strings.Contains(tmpl.Source(), "enable_thinking")
	return mi
}
