package serve

import (
	"testing"

	"github.com/churon/churon/models/synth/synthtest"
)

func TestMain(m *testing.M) { synthtest.Main(m) }
