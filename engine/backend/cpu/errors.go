package cpu

import "fmt"

func errRows(n, rs int) error {
	return fmt.Errorf("cpu: kv cache: %d bytes are not whole rows of %d", n, rs)
}

func errState(n, want int) error {
	return fmt.Errorf("cpu: state: %d bytes for a state of %d", n, want)
}
