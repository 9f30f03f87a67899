package session

import (
	"fmt"
	"strconv"
	"strings"
)

// SettingGPU is the app setting that chooses where models run, from the
// next load: "" or "auto" puts as many layers on a GPU as fit in its
// memory, "cpu" none, and a positive number that many (the last layers,
// as llama.cpp's -ngl counts them: more than the model has adds the
// output head). A program that chooses itself (churon chat -device,
// -ngl) overrides it.
const SettingGPU = "session.gpu"

// ParseGPU reads a SettingGPU value: cpu for "cpu" (or "0"), else the
// number of layers, 0 meaning as many as fit.
func ParseGPU(v string) (cpu bool, layers int, err error) {
	switch v = strings.ToLower(strings.TrimSpace(v)); v {
	case "", "auto":
		return false, 0, nil
	case "cpu", "0":
		return true, 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return false, 0, fmt.Errorf("session: GPU setting %q: want auto, cpu or a number of layers", v)
	}
	return false, n, nil
}
