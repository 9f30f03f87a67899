package session

import (
	api "github.com/churon/churon/app/api/session"
	"github.com/churon/churon/engine"
)

// gpuChoice is where the next model's layers may run: the Manager's
// options when the program chose (a device or a layer count), else the
// person's setting (SettingGPU), else as many layers as fit on the first
// accelerator found.
func (m *Manager) gpuChoice() (device string, layers int) {
	if m.opt.Device != "" || m.opt.GPULayers != engine.OffloadAuto {
		return m.opt.Device, m.opt.GPULayers
	}
	v, _ := m.Setting(api.SettingGPU)
	cpu, n, err := api.ParseGPU(v)
	switch {
	case err != nil:
		return "", engine.OffloadAuto
	case cpu:
		return "cpu", engine.OffloadNone
	}
	return "", n
}
