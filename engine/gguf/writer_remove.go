package gguf

// RemoveTensor drops a tensor added earlier and reports whether it was
// there. Tests use it to make files with a tensor missing.
func (w *Writer) RemoveTensor(name string) bool {
	i, ok := w.tIndex[name]
	if !ok {
		return false
	}
	w.tensors = append(w.tensors[:i], w.tensors[i+1:]...)
	delete(w.tIndex, name)
	for j := i; j < len(w.tensors); j++ {
		w.tIndex[w.tensors[j].info.Name] = j
	}
	return true
}
