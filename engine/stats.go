package engine

// StepBytes is the number of weight bytes one forward step reads from
// memory: every tensor except the token embedding, of which a step reads
// only its tokens' rows — unless the output projection shares it, in
// which case all of it. Decoding is bound by memory bandwidth, so
// StepBytes × steps per second is the read rate a benchmark compares
// with the machine's bandwidth. A batched step reads the weights once for
// all its sequences.
func (m *Model) StepBytes() int64 {
	if m.file == nil {
		return 0
	}
	tied := m.net.Config().TiedEmbd
	var n int64
	for _, t := range m.file.Tensors {
		if t.Name == "token_embd.weight" && !tied {
			continue
		}
		n += int64(t.Size)
	}
	return n
}
