package backend

import (
	"fmt"
	"strings"
)

// Plan puts each part of a model on a device: the embedding (Input),
// every layer, and the output head (the final norm and projection).
// The forward pass runs each part where the plan says and moves the
// residual stream to the next part's device when it differs.
type Plan struct {
	Input  Device
	Layers []Device
	Output Device
}

// Single is the plan that runs everything on d.
func Single(d Device, layers int) *Plan {
	p := &Plan{Input: d, Output: d, Layers: make([]Device, layers)}
	for i := range p.Layers {
		p.Layers[i] = d
	}
	return p
}

// Offload is llama.cpp's rule for n offloaded layers: the last n layers
// go on dev and, once n exceeds the layers, the output head too; the
// embedding and the other layers stay on host. So a pass crosses from
// host to dev once, and the logits come back from dev. A part for which
// runs(stage) is false — its weights are of a type dev cannot multiply —
// stays on host as well, the rare case with more than one crossing.
// Stages number the layers from 0 and the output head as len(Layers).
func Offload(host, dev Device, layers, n int, runs func(stage int) bool) *Plan {
	p := Single(host, layers)
	start := max(layers-n, 0)
	for i := start; i < layers; i++ {
		if runs == nil || runs(i) {
			p.Layers[i] = dev
		}
	}
	if n > layers && (runs == nil || runs(layers)) {
		p.Output = dev
	}
	return p
}

// Sizes is what a model needs of a device's memory, for AutoOffload.
type Sizes struct {
	// Layer is each layer's weights plus its cache for the sequences
	// planned for, in bytes.
	Layer []int64
	// Output is the output head's weights and its logits buffer.
	Output int64
	// Fixed is what the device needs as soon as anything runs on it: the
	// activation buffers of the largest pass. (The backend's own needs are
	// already left out of its FreeBytes.)
	Fixed int64
}

// AutoOffload is the largest n (0 to layers+1, as Offload counts) whose
// parts fit in free bytes. Parts that stay on the host anyway (runs false)
// take nothing. free < 0 (a device that does not plan by memory) fits
// everything.
func AutoOffload(free int64, s Sizes, runs func(stage int) bool) int {
	L := len(s.Layer)
	if free < 0 {
		return L + 1
	}
	need := s.Fixed
	best := 0
	for n := 1; n <= L+1; n++ {
		stage := L - n // the part that n adds: layers from the end, then the head
		var add int64
		if n == L+1 {
			stage = L
			add = s.Output
		} else {
			add = s.Layer[stage]
		}
		if runs != nil && !runs(stage) {
			add = 0
		}
		need += add
		if need > free {
			break
		}
		best = n
	}
	return best
}

// Stage is the device of stage i: -1 is the embedding, 0 … len(Layers)-1
// the layers, len(Layers) the output head.
func (p *Plan) Stage(i int) Device {
	switch {
	case i < 0:
		return p.Input
	case i >= len(p.Layers):
		return p.Output
	}
	return p.Layers[i]
}

// Devices lists the plan's distinct devices in the order a pass meets
// them.
func (p *Plan) Devices() []Device {
	var out []Device
	add := func(d Device) {
		for _, e := range out {
			if e == d {
				return
			}
		}
		out = append(out, d)
	}
	add(p.Input)
	for _, d := range p.Layers {
		add(d)
	}
	add(p.Output)
	return out
}

// Crossings counts the times a pass moves the residual stream to another
// device.
func (p *Plan) Crossings() int {
	n, prev := 0, p.Input
	for i := range len(p.Layers) + 1 {
		if d := p.Stage(i); d != prev {
			n++
			prev = d
		}
	}
	return n
}

// LayersOn counts the layers on d and whether the output head is there.
func (p *Plan) LayersOn(d Device) (layers int, output bool) {
	for _, e := range p.Layers {
		if e == d {
			layers++
		}
	}
	return layers, p.Output == d
}

// String says what runs where, device by device, in the order a pass
// meets them: "GPU: 12/24 layers, output · CPU: embedding, 12/24 layers".
func (p *Plan) String() string {
	devs := p.Devices()
	if len(devs) == 1 {
		return devs[0].Name()
	}
	var parts []string
	for _, d := range devs {
		var what []string
		if p.Input == d {
			what = append(what, "embedding")
		}
		if n, out := p.LayersOn(d); n > 0 || out {
			if n > 0 {
				what = append(what, fmt.Sprintf("%d/%d layers", n, len(p.Layers)))
			}
			if out {
				what = append(what, "output")
			}
		}
		parts = append(parts, d.Name()+": "+strings.Join(what, ", "))
	}
	return strings.Join(parts, " · ")
}
