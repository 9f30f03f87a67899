package session

import (
	"testing"

	api "github.com/churon/churon/app/api/session"
	"github.com/churon/churon/app/store/storetest"
	"github.com/churon/churon/engine"
)

// TestGPUChoice: the person's GPU setting decides where the next model
// runs unless the program chose; a value it cannot read means automatic.
func TestGPUChoice(t *testing.T) {
	st := storetest.Temp(t)
	for _, tc := range []struct {
		opt     Options
		setting string
		device  string
		layers  int
	}{
		{Options{}, "", "", engine.OffloadAuto},
		{Options{}, "auto", "", engine.OffloadAuto},
		{Options{}, "cpu", "cpu", engine.OffloadNone},
		{Options{}, "0", "cpu", engine.OffloadNone},
		{Options{}, "12", "", 12},
		{Options{}, "lots", "", engine.OffloadAuto},
		{Options{Device: "cuda"}, "cpu", "cuda", engine.OffloadAuto},
		{Options{GPULayers: 3}, "cpu", "", 3},
		{Options{Device: "cpu", GPULayers: engine.OffloadNone}, "20", "cpu", engine.OffloadNone},
	} {
		m := New(st, tc.opt)
		if tc.setting != "" {
			if err := m.SetSetting(api.SettingGPU, tc.setting); err != nil {
				t.Fatal(err)
			}
		}
		dev, n := m.gpuChoice()
		if dev != tc.device || n != tc.layers {
			t.Errorf("options %+v, setting %q: device %q, %d layers; want %q, %d", tc.opt, tc.setting, dev, n, tc.device, tc.layers)
		}
		_ = m.SetSetting(api.SettingGPU, "")
		m.Close()
	}
}
