package engine

import "strings"

// StepBytes is the number of weight bytes one forward step reads from
// memory: every tensor except the token embedding, of which a step reads
// only its tokens' rows — unless the output projection shares it, in
// which case all of it. Decoding is bound by memory bandwidth, so
// StepBytes × steps per second is the read rate a benchmark compares
// with the machine's bandwidth. A batched step reads the weights once for
// all its sequences. Of a mixture of experts' expert tensors, one token
// reads only its experts' share (ExpertsUsed of Experts).
func (m *Model) StepBytes() int64 {
	if m.file == nil {
		return 0
	}
	c := m.net.Config()
	var n int64
	for _, t := range m.file.Tensors {
		switch {
		case t.Name == "token_embd.weight" && !c.TiedEmbd:
		case c.Experts > 0 && strings.Contains(t.Name, "_exps."):
			n += int64(t.Size) * int64(c.ExpertsUsed) / int64(c.Experts)
		default:
			n += int64(t.Size)
		}
	}
	return n
}
