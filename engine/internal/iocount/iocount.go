// Package iocount counts what goes through an io.Writer, for the writers
// of GGUF files that must say (or check) how many bytes they wrote.
package iocount

import "io"

// Writer passes writes on to W and counts the bytes W took in N.
type Writer struct {
	W io.Writer
	N int64
}

func (c *Writer) Write(p []byte) (int, error) {
	n, err := c.W.Write(p)
	c.N += int64(n)
	return n, err
}
