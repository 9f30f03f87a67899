package gguf

// RemoveTensor drops a tensor added earlier and reports whether it was
// there. Tests use it to make files with a tensor missing.
func (w *Writer) RemoveTensor(name string) bool {
	return removeIndexed(&w.tensors, w.tIndex, name, func(t wTensor) string { return t.info.Name })
}
