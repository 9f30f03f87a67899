//go:build !(linux && cgo)

package cmalloc

const supported = false

func read() (Stats, bool) { return Stats{}, false }

func trim() {}

func fillHeap(n, size int) (release func()) { return func() {} }
